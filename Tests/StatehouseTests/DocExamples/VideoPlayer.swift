import Foundation
import Statehouse

// The modelling-state example (Statehouse.docc/ModellingState.md): a video that is downloaded, then played.
// The article shows this code; `DocumentationTests` checks that every code block of the articles is in a file of
// this folder, so the article's code is compiled and this example tested.

// MARK: State

struct Video: Equatable, Sendable {
    enum State: Equatable, Sendable {
        case willDownload(from: URL)
        case downloading(Download)
        case playing(Playback)
        case paused(Playback)
    }

    struct Download: Equatable, Sendable {
        let url: URL
        var fraction: Double
    }

    struct Playback: Equatable, Sendable {
        let file: URL
        var position: Double
    }

    var state: State
}

extension Video {
    var download: Download? {
        guard case .downloading(let download) = state else { return nil }
        return download
    }

    var playback: Playback? {
        switch state {
        case .playing(let playback), .paused(let playback): playback
        case .willDownload, .downloading: nil
        }
    }

    var isPlaying: Bool {
        if case .playing = state { true } else { false }
    }
}

// MARK: Actions and the reducer

enum VideoAction: Equatable, Sendable {
    case startDownload
    case downloadProgressed(Double)
    case downloadFinished(file: URL)
    case cancelDownload
    case play
    case pause
}

enum DownloadEvent: Sendable {
    case progressed(Double)
    case finished(file: URL)
}

protocol Downloader: Sendable {
    func download(from url: URL) -> AsyncStream<DownloadEvent>
}

struct DownloadID: Hashable, Sendable {}

func videoReducer(downloader: some Downloader) -> @Sendable (inout Video, VideoAction) -> Effect<VideoAction> {
    { video, action in
        switch (video.state, action) {
        case (.willDownload(let url), .startDownload):
            video.state = .downloading(Video.Download(url: url, fraction: 0))
            return .run { send in
                for await event in downloader.download(from: url) {
                    switch event {
                    case .progressed(let fraction): send(.downloadProgressed(fraction))
                    case .finished(let file): send(.downloadFinished(file: file))
                    }
                }
            }
            .cancellable(id: DownloadID(), cancelInFlight: true)
        case (.downloading(var download), .downloadProgressed(let fraction)):
            download.fraction = fraction
            video.state = .downloading(download)
            return .none
        case (.downloading, .downloadFinished(let file)):
            video.state = .playing(Video.Playback(file: file, position: 0))
            return .none
        case (.downloading(let download), .cancelDownload):
            video.state = .willDownload(from: download.url)
            return .cancel(id: DownloadID())
        case (.paused(let playback), .play):
            video.state = .playing(playback)
            return .none
        case (.playing(let playback), .pause):
            video.state = .paused(playback)
            return .none
        default:
            return .none  // an action that means nothing in this state
        }
    }
}

// MARK: Rendering

enum ActionButton: Equatable, Sendable {
    case wait, cancel, pause, play
}

/// Renders on whichever thread delivers the state (an effect's, for the download's progress), and the test reads what
/// it shows from its own: what it shows is kept under a lock that ThreadSanitizer sees.
final class VideoPlayerView: StatefulView, Sendable {
    private let shown = Locked((button: ActionButton.wait, progress: ""))

    var actionButton: ActionButton { shown.withLock { $0.button } }
    var progressText: String { shown.withLock { $0.progress } }

    func render(state video: Video) {
        let button: ActionButton = switch video.state {
        case .willDownload: .wait
        case .downloading: .cancel
        case .playing: .pause
        case .paused: .play
        }
        let progress = switch video.state {
        case .willDownload: ""
        case .downloading(let download): "\(Int(download.fraction * 100)) %"
        case .playing(let playback), .paused(let playback): "at \(playback.position) s"
        }
        shown.withLock { $0 = (button, progress) }
    }
}
