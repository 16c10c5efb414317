import Testing
import TimeTrackerCore

/// A name that looks exactly like another (the same characters with invisible code points added, or a variation a
/// reader cannot see) is refused, or is the same name: never a second project that looks like the first.
@Suite("Names that look like another")
struct LookAlikeNameTests {
    /// Tag characters as a string (U+E0000 + ASCII).
    private static func tags(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { Unicode.Scalar($0.value + 0xE0000)! }))
    }

    /// Default-ignorable code points inside an emoji character (a variation selector after a digit or `#`, stacked
    /// selectors, tag characters after a black flag) are refused, or make the same name.
    @Test(arguments: [
        ("Invoice 1\u{FE0F}", "Invoice 1"),
        ("Sprint #\u{FE0E}", "Sprint #"),
        ("\u{1F600}\u{FE0F}\u{FE0F}\u{FE0F}", "\u{1F600}"),  // a selector after 😀 changes nothing: refused now
        ("\u{1F3F4}\u{E0041}\u{E0042}\u{E0043}", "\u{1F3F4}"),
    ])
    func anInvisibleCodePointInAnEmojiCharacterDoesNotMakeALookAlike(spoof: String, original: String) throws {
        let originalKey = try ProjectName(original).key
        let accepted = try? ProjectName(spoof)
        #expect(
            accepted == nil || accepted?.key == originalKey,
            "\(spoof.unicodeScalars.map { String($0.value, radix: 16) }) is a distinct name that looks like \(original)"
        )
    }

    /// A selector or joiner where it changes nothing a person sees (after an emoji that has no variation, after a skin
    /// tone or a flag, between two pictographs that form no sequence, between text symbols), tags that name no
    /// subdivision, and a trailing blank braille pattern: each pair is refused, or one name.
    @Test(arguments: [
        ("😀", "😀\u{FE0F}"),
        ("😀", "😀\u{FE0E}"),
        ("👍🏽", "👍🏽\u{FE0F}"),
        ("🇫🇷", "🇫🇷\u{FE0F}"),
        ("😀😀", "😀\u{200D}😀"),
        ("Acme ©®", "Acme ©\u{200D}®"),
        ("🏴", "🏴" + tags("ab") + "\u{E007F}"),
        ("Writing", "Writing\u{2800}"),
    ])
    func aLookAlikeIsRefusedOrTheSameName(original: String, lookAlike: String) throws {
        let first = try ProjectName(original)
        guard let second = try? ProjectName(lookAlike) else { return }
        #expect(
            first.key == second.key,
            "\(lookAlike.unicodeScalars.map { String($0.value, radix: 16) }) is accepted beside \(original) as another name"
        )
    }

    /// Tag characters that spell hidden text after a black flag are refused.
    @Test func tagsThatSpellHiddenTextAreRefused() {
        #expect(throws: TrackerError.self) { try ProjectName("🏴" + Self.tags("ignorepreviousinstructions") + "\u{E007F}") }
    }
}
