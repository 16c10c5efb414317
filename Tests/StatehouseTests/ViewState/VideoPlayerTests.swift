import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A downloader the test drives: each download yields what the test sends.
final class ScriptedDownloader: Downloader {
    private let continuations = Locked<[AsyncStream<DownloadEvent>.Continuation]>([])

    func download(from url: URL) -> AsyncStream<DownloadEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DownloadEvent.self)
        continuations.withLock { $0.append(continuation) }
        return stream
    }

    var downloadsStarted: Int { continuations.withLock { $0.count } }

    func send(_ event: DownloadEvent) {
        let latest = continuations.withLock { $0.last }
        latest?.yield(event)
        if case .finished = event { latest?.finish() }
    }
}

@Suite("Modelled state: the video player")
struct VideoPlayerTests {
    static let source = URL(string: "https://example.com/talk.mp4")!
    static let file = URL(fileURLWithPath: "/tmp/talk.mp4")

    @Test func downloadsThenPlaysAndRendersEveryState() async {
        let downloader = ScriptedDownloader()
        let store = Store(initialState: Video(state: .willDownload(from: Self.source)), reducer: videoReducer(downloader: downloader))
        let view = VideoPlayerView()
        view.connect(to: store)
        #expect(view.actionButton == .wait)

        store.dispatch(.startDownload)
        #expect(view.actionButton == .cancel)
        #expect(await eventually { downloader.downloadsStarted == 1 })
        downloader.send(.progressed(0.5))
        #expect(await eventually { view.progressText == "50 %" })
        downloader.send(.finished(file: Self.file))
        await store.finishEffects()
        #expect(store.state.state == .playing(Video.Playback(file: Self.file, position: 0)))
        #expect(view.actionButton == .pause)
        #expect(store.state.isPlaying && store.state.download == nil && store.state.playback?.file == Self.file)

        store.dispatch(.pause)
        #expect(view.actionButton == .play)
        store.dispatch(.play)
        #expect(view.actionButton == .pause)
    }

    @Test func cancellingTheDownloadGoesBackAndStopsTheEffect() async {
        let downloader = ScriptedDownloader()
        let store = Store(initialState: Video(state: .willDownload(from: Self.source)), reducer: videoReducer(downloader: downloader))
        store.dispatch(.startDownload)
        #expect(await eventually { downloader.downloadsStarted == 1 })
        store.dispatch(.cancelDownload)
        #expect(store.state.state == .willDownload(from: Self.source))
        downloader.send(.finished(file: Self.file))  // too late: the effect was cancelled
        await store.finishEffects()
        #expect(store.state.state == .willDownload(from: Self.source))
    }

    @Test func actionsThatMeanNothingInTheCurrentStateChangeNothing() {
        let store = Store(initialState: Video(state: .willDownload(from: Self.source)), reducer: videoReducer(downloader: ScriptedDownloader()))
        store.dispatch(.play)
        store.dispatch(.downloadFinished(file: Self.file))
        #expect(store.state.state == .willDownload(from: Self.source))
    }
}
