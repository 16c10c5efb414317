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
        // Braille's blank pattern (U+2800) is neither white space nor invisible to Unicode, but shows as nothing.
        guard name.unicodeScalars.contains(where: { !$0.properties.isWhitespace && $0.value != 0x2800 }) else {
            throw .emptyName
        }
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
    /// invisible code point is how emoji are written: a joiner between two pictographs (👩‍👩‍👧), one presentation
    /// selector right after an emoji (❤️, or a keycap's digit: 1️⃣), the tag letters of a subdivision flag closed by its
    /// cancel tag (🏴 + "gbsct" + cancel). Anything more (a selector after a plain digit, two selectors, tags that
    /// spell hidden text) makes two names that look alike, so it is refused.
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

private extension Unicode.Scalar {
    /// An emoji that is a picture: not one of the ASCII characters (digits, `#`, `*`) that Unicode also calls emoji.
    var isPictograph: Bool { properties.isEmoji && !isASCII }
    var isPresentationSelector: Bool { value == 0xFE0E || value == 0xFE0F }
    var isSkinToneModifier: Bool { (0x1F3FB...0x1F3FF).contains(value) }
    var isTagLetterOrDigit: Bool { (0xE0061...0xE007A).contains(value) || (0xE0030...0xE0039).contains(value) }
}

private extension Array where Element == Unicode.Scalar {
    /// Whether the default-ignorable scalar at `index` is part of the emoji sequence this character is.
    func isEmojiSequence(allowing index: Int) -> Bool {
        guard index > 0 else { return false }
        let before = self[index - 1], after = index + 1 < count ? self[index + 1] : nil
        switch self[index].value {
        case 0x200D:  // zero width joiner: between two pictographs (the first possibly dressed)
            let joinsAPictograph = before.isPictograph || before.isSkinToneModifier
                || (before.value == 0xFE0F && index > 1 && self[index - 2].isPictograph)
            return joinsAPictograph && after?.isPictograph == true
        case 0xFE0E, 0xFE0F:  // one presentation selector, after an emoji; after a digit, # or *, only in a keycap
            return before.isPictograph || (before.properties.isEmoji && after?.value == 0x20E3)
        case 0xE0020...0xE007F:  // tags: exactly a subdivision flag, 🏴 then tag letters or digits then cancel
            return self[0].value == 0x1F3F4 && self.last?.value == 0xE007F
                && self.dropFirst().dropLast().allSatisfy(\.isTagLetterOrDigit) && count > 2
        default:
            return false
        }
    }
}
