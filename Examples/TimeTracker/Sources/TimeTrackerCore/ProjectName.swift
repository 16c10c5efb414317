import Foundation

/// The rules for a project's name: what is stored, and the key that makes names unique.
///
/// A name is what a person reads, so the rules are about what a person sees: a length they can count (and a size in
/// bytes, since one visible character may hold thousands of combining marks), nothing invisible or that reorders
/// the text around it (an invisible character makes two names that look the same, a bidi override makes one that
/// reads as another), and uniqueness that ignores case the way Unicode does (`ΟΔΟΣ` is `οδος`, `STRASSE` is `straße`).
public struct ProjectName: Equatable, Sendable {
    /// The longest name, in user-perceived characters (grapheme clusters).
    public static let maximumLength = 200
    /// The largest name, in UTF-8 bytes.
    public static let maximumByteCount = 400

    /// The name as shown: trimmed, in Unicode's composed form (so that "é" typed two ways is one name).
    public let display: String
    /// What uniqueness is checked on: see ``key(for:)``.
    public let key: String

    /// Applies the rules to what the user typed.
    public init(_ raw: String) throws(TrackerError) {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        guard !name.isEmpty else { throw .emptyName }
        guard name.count <= Self.maximumLength, name.utf8.count <= Self.maximumByteCount else { throw .nameTooLong }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .nameHasControlCharacters
        }
        if let first = name.unicodeScalars.first, first.properties.isMark { throw .nameStartsWithCombiningMark }
        if let hidden = name.firstMisleadingScalar { throw .nameHasInvisibleCharacters(hidden) }
        display = name
        key = Self.key(for: name)
    }

    /// The uniqueness key of any string, and how the CLI finds a project by the name the user typed: compatibility
    /// composed (NFKC, so "ﬁ" is "fi"), then case folded (Unicode's full folding: "ß" is "ss", "ς" is "σ"), then
    /// composed again, as Unicode's `NFKC_Casefold` does.
    public static func key(for name: String) -> String {
        name.trimmingCharacters(in: .whitespacesAndNewlines)
            .precomposedStringWithCompatibilityMapping
            .folding(options: .caseInsensitive, locale: nil)
            .precomposedStringWithCompatibilityMapping
    }
}

private extension Unicode.Scalar.Properties {
    var isMark: Bool {
        [.nonspacingMark, .spacingMark, .enclosingMark].contains(generalCategory)
    }
}

private extension String {
    /// The first code point that is invisible (default-ignorable) or a bidi control, outside the sequences where an
    /// invisible code point is how emoji are written: a joiner between two emoji (👩‍👩‍👧), a variation selector after
    /// one (❤️), the tags of a subdivision flag (🏴 followed by tag letters).
    var firstMisleadingScalar: Unicode.Scalar? {
        for character in self {
            let scalars = Array(character.unicodeScalars)
            for (index, scalar) in scalars.enumerated() {
                let properties = scalar.properties
                if properties.isBidiControl { return scalar }
                guard properties.isDefaultIgnorableCodePoint else { continue }
                if !scalars.isEmojiSequence(allowing: index) { return scalar }
            }
        }
        return nil
    }
}

private extension Array where Element == Unicode.Scalar {
    /// Whether the default-ignorable scalar at `index` is part of the emoji sequence this character is.
    func isEmojiSequence(allowing index: Int) -> Bool {
        guard index > 0, self[0].properties.isEmoji else { return false }
        switch self[index].value {
        case 0x200D:  // zero width joiner: between two emoji
            return index + 1 < count && self[index + 1].properties.isEmoji
        case 0xFE0E, 0xFE0F:  // text or emoji presentation selector
            return true
        case 0xE0020...0xE007F:  // tags: only in a subdivision flag
            return self[0].value == 0x1F3F4
        default:
            return false
        }
    }
}
