import Foundation
import Testing
import Statehouse

struct APIError: Error, Equatable, Sendable, Codable {
    var message: String
}

@Suite("LoadingState")
struct LoadingStateTests {
    typealias Jobs = LoadingState<[String], APIError>
    static let failure = APIError(message: "offline")

    /// Every case, with what it shows and what a screen should hide.
    static let cases: [(state: Jobs, presentation: LoadingPresentation<[String], APIError>, hideLoading: Bool, hideError: Bool)] = [
        (.idle, .placeholder, false, true),
        (.loading(nil), .placeholder, false, true),
        (.loading(["a"]), .content(["a"], refreshing: true), true, true),
        (.loaded(["a"]), .content(["a"], refreshing: false), true, true),
        (.failed(failure, nil), .errorPlaceholder(failure), true, false),
        (.failed(failure, ["a"]), .contentWithError(["a"], failure), true, true),
    ]

    @Test(arguments: 0..<6)
    func presentationAndVisibilityForEveryCase(index: Int) {
        let expected = Self.cases[index]
        #expect(expected.state.presentation == expected.presentation)
        #expect(expected.state.shouldHideLoadingView == expected.hideLoading)
        #expect(expected.state.shouldHideErrorView == expected.hideError)
    }

    @Test func accessors() {
        #expect(Jobs.idle.value == nil)
        #expect(Jobs.loading(["a"]).value == ["a"])
        #expect(Jobs.failed(Self.failure, ["b"]).value == ["b"])
        #expect(Jobs.failed(Self.failure, nil).error == Self.failure)
        #expect(Jobs.loaded([]).error == nil)
        #expect(Jobs.loading(nil).isLoading)
        #expect(!Jobs.loaded([]).isLoading)
    }

    @Test func mapTransformsTheDataAndKeepsTheCase() {
        #expect(Jobs.loading(["a", "b"]).map(\.count) == .loading(2))
        #expect(Jobs.failed(Self.failure, nil).map(\.count) == .failed(Self.failure, nil))
        #expect(Jobs.idle.map(\.count) == .idle)
        struct Wrapped: Error, Equatable { var inner: APIError }
        #expect(Jobs.failed(Self.failure, ["a"]).mapError { Wrapped(inner: $0) }.error == Wrapped(inner: Self.failure))
    }

    @Test func codableRoundTrip() throws {
        for (state, _, _, _) in Self.cases {
            let data = try JSONEncoder().encode(state)
            #expect(try JSONDecoder().decode(Jobs.self, from: data) == state)
        }
    }
}
