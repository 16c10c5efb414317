import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

@Suite("Project names")
struct ProjectNameTests {
    @Test func namesAreTrimmedAndComposed() throws {
        #expect(try ProjectName("  Writing \n").display == "Writing")
        #expect(try ProjectName("e\u{301}te\u{301}").display == "été")
    }

    @Test(arguments: ["", "   ", "\n\t "])
    func anEmptyNameIsRefused(_ name: String) {
        #expect(throws: TrackerError.emptyName) { try ProjectName(name) }
    }

    @Test func overlongNamesAndControlCharactersAreRefused() throws {
        #expect(throws: TrackerError.nameTooLong) { try ProjectName(String(repeating: "x", count: 201)) }
        #expect(try ProjectName(String(repeating: "é", count: 200)).display.count == 200)
        #expect(throws: TrackerError.nameHasControlCharacters) { try ProjectName("a\nb") }
        #expect(throws: TrackerError.nameHasControlCharacters) { try ProjectName("a\u{0}b") }
    }

    @Test func theKeyIgnoresCaseAndNormalization() throws {
        #expect(try ProjectName("WRITING").key == (try ProjectName("writing").key))
        #expect(try ProjectName("ÉTÉ").key == (try ProjectName("e\u{301}te\u{301}").key))
    }

    /// A name is bounded in UTF-8 bytes (400) as well as in characters: one letter with 7,999 combining marks is one
    /// character of 16,000 bytes.
    @Test func aNameIsBoundedInBytesToo() throws {
        let heavy = "a" + String(repeating: "\u{301}", count: 7_999)
        #expect(heavy.count == 1)
        #expect(throws: TrackerError.nameTooLong) { try ProjectName(heavy) }
        #expect(throws: TrackerError.nameTooLong) { try ProjectName(String(repeating: "€", count: 134)) }  // 402 bytes
        #expect(try ProjectName(String(repeating: "€", count: 133)).display.utf8.count == 399)
        #expect(TrackerError.nameTooLong.description.contains("400 bytes"))
    }

    /// Two names are one when Unicode's case folding makes them one, not only when lowercasing does.
    @Test(arguments: [("ΟΔΟΣ", "οδος"), ("straße", "STRASSE"), ("ﬁle", "FILE"), ("Ǆemal", "ǆemal")])
    func theKeyFoldsCaseAsUnicodeDoes(one: String, other: String) throws {
        #expect(try ProjectName(one).key == (try ProjectName(other).key))
        #expect(try ProjectName(one).display == one)
    }

    /// Invisible and text-direction characters are refused, and the refusal names the code point: they make one name
    /// look like another, or like nothing.
    @Test(arguments: [
        "Wri\u{200B}ting", "\u{FEFF}Writing", "\u{200C}", "Writing\u{2060}", "\u{202E}gnitirW", "Wri\u{200D}ting",
        "abc\u{2066}d", "x\u{115F}",
    ])
    func invisibleAndDirectionCharactersAreRefused(name: String) {
        #expect {
            try ProjectName(name)
        } throws: { error in
            guard case .nameHasInvisibleCharacters = error as? TrackerError else { return false }
            return (error as? TrackerError)?.description.contains("U+") == true
        }
    }

    @Test(arguments: ["\u{301}", "\u{301}Writing", "\u{20DD}"])
    func aNameCannotBeginWithACombiningMark(name: String) {
        #expect(throws: TrackerError.nameStartsWithCombiningMark) { try ProjectName(name) }
    }

    @Test(arguments: [
        "👩\u{200D}👩\u{200D}👧 family", "❤\u{FE0F} hearts", "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F} Scotland",
        "1\u{FE0F}\u{20E3} first", "#️⃣ tag", "👍🏽", "🧑🏽‍💻 code", "🇫🇷", "❤️‍🔥", "🏳️‍🌈", "🏳️‍⚧️", "👁️‍🗨️", "🏃🏽‍♀️‍➡️",
        "🫱🏻‍🫲🏿", "🏴‍☠️", "🐻‍❄️", "🐦‍🔥", "🤷🏾‍♀️",
    ])
    func emojiSequencesKeepTheirJoinersAndSelectors(name: String) throws {
        #expect(try ProjectName(name).display == name.precomposedStringWithCanonicalMapping)
    }
}
