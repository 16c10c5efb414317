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
        // Line and paragraph separators break a name as a new line does.
        guard !name.unicodeScalars.contains(where: { [.control, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory) }) else {
            throw .nameHasControlCharacters
        }
        if let first = name.unicodeScalars.first, first.properties.isMark { throw .nameStartsWithCombiningMark }
        if let hidden = name.firstMisleadingScalar { throw .nameHasInvisibleCharacters(hidden) }
        display = name
        key = Self.key(for: name)
    }

    /// The uniqueness key of any string, and how the CLI finds a project by the name the user typed, as Unicode's
    /// `NFKC_Casefold` makes it: compatibility composed (NFKC, so "ﬁ" is "fi"), case folded (Unicode's full
    /// folding: "ß" is "ss", "ς" is "σ"), composed again, and without the invisible code points the rules allow in
    /// emoji (joiners, presentation selectors, tags), so that no invisible difference makes two names.
    public static func key(for name: String) -> String {
        let folded = name.trimmingCharacters(in: .whitespacesAndNewlines)
            .precomposedStringWithCompatibilityMapping
            .folding(options: .caseInsensitive, locale: nil)
            .precomposedStringWithCompatibilityMapping
        var key = String.UnicodeScalarView()
        key.append(contentsOf: folded.unicodeScalars.filter { !$0.properties.isDefaultIgnorableCodePoint })
        return String(key)
    }
}

private extension Unicode.Scalar.Properties {
    var isMark: Bool {
        [.nonspacingMark, .spacingMark, .enclosingMark].contains(generalCategory)
    }
}

private extension String {
    /// The first code point that is invisible (default-ignorable, or Braille's blank pattern U+2800, which Unicode
    /// counts as neither) or a bidi control, outside the sequences where an invisible code point is how emoji are
    /// written: a joiner between two pictographs (👩‍👩‍👧), the emoji selector after a character that is text
    /// without it (❤️, or a keycap's digit: 1️⃣), the tags of the three subdivision flags (England, Scotland, Wales).
    /// Anything else (a selector that changes nothing, tags that spell hidden text) would make two names that look
    /// alike, and is refused; the key ignores what is allowed, so `😀‍😀` and `😀😀` are one name.
    var firstMisleadingScalar: Unicode.Scalar? {
        for character in self {
            let scalars = Array(character.unicodeScalars)
            for (index, scalar) in scalars.enumerated() {
                let properties = scalar.properties
                if properties.isBidiControl || scalar.value == 0x2800 { return scalar }
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
    var isSkinToneModifier: Bool { (0x1F3FB...0x1F3FF).contains(value) }
}

/// The tag sequences of the subdivision flags Unicode recommends (England, Scotland, Wales): 🏴 + these + cancel.
private let subdivisionFlagTags: Set<String> = ["gbeng", "gbsct", "gbwls"]

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
        case 0xFE0F:  // the emoji selector: only where it changes something (text by default), or in a keycap
            return before.properties.isEmoji && !before.properties.isEmojiPresentation && !before.isSkinToneModifier
                && (before.isPictograph || after?.value == 0x20E3)
        case 0xE0020...0xE007F:  // tags: only as one of the recommended subdivision flags
            guard self[0].value == 0x1F3F4, self.last?.value == 0xE007F else { return false }
            let letters = dropFirst().dropLast().map { Character(Unicode.Scalar($0.value - 0xE0000)!) }
            return subdivisionFlagTags.contains(String(letters))
        default:
            return false
        }
    }
}
