import Foundation
import StatehouseSyncWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client's side of the wire protocol for containers: reads, versioned writes and feeds, by key. Reads and
/// writes wait on the calling thread, as a storage's calls do.
struct ContainerConnection: Sendable {
    /// A container's value on the server (`nil`: nothing stored) and its version.
    struct Remote: Equatable {
        var value: Data?
        var version: Int64
    }

    enum WriteAnswer: Equatable {
        case stored(version: Int64)
        /// The server holds another version than the one the write replaces.
        case conflict
        /// The request never left: no connection could be made. Nothing was stored.
        case notSent(SyncError)
        /// No answer, or an error: the write may have been stored (a lost answer, a 5xx from a proxy), or not.
        case failed(SyncError)
    }

    /// Failures that happen before a request is sent.
    private static let beforeSending: Set<URLError.Code> = [
        .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
    ]

    let http: SyncHTTP

    private func url(_ key: String) -> URL {
        http.server.appendingPathComponent("containers").appendingPathComponent(key)
    }

    /// - Parameter timeout: How long to wait for the answer, when shorter than the session's.
    func read(_ key: String, timeout: TimeInterval? = nil) -> Result<Remote, SyncError> {
        var request = URLRequest(url: url(key))
        if let timeout { request.timeoutInterval = timeout }
        let (data, response, failure) = http.exchangeWaiting(request)
        if let failure { return .failure(.unreachable(failure.localizedDescription)) }
        let status = response?.statusCode ?? 0
        // A 404 with an ETag: the container is hosted, with nothing stored; without, it is not hosted.
        let version = Self.version(response)
        switch (status, version) {
        case (200, let version?): return .success(Remote(value: data, version: version))
        case (404, let version?): return .success(Remote(value: nil, version: version))
        case (200, nil): return .failure(.unreachable("The server's answer has no ETag."))
        default: return .failure(SyncHTTP.failure(status: status, body: data))
        }
    }

    /// Stores `value` (`nil` removes it) in place of `base`'s version only (`If-Match`), or, when `base` holds
    /// nothing, only if the server holds nothing either (`If-None-Match: *`).
    func write(_ key: String, _ value: Data?, replacing base: (version: Int64?, value: Data?)) -> WriteAnswer {
        var request = URLRequest(url: url(key))
        request.httpMethod = value == nil ? "DELETE" : "PUT"
        if let value {
            request.httpBody = value
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let version = base.version, base.value != nil {
            request.setValue("\"\(version)\"", forHTTPHeaderField: "If-Match")
        } else {
            request.setValue("*", forHTTPHeaderField: "If-None-Match")
        }
        let (data, response, failure) = http.exchangeWaiting(request)
        if let failure {
            let error = SyncError.unreachable(failure.localizedDescription)
            let sent = (failure as? URLError).map { !Self.beforeSending.contains($0.code) } ?? true
            return sent ? .failed(error) : .notSent(error)
        }
        switch (response?.statusCode ?? 0, Self.version(response)) {
        case (204, let version?): return .stored(version: version)
        case (412, _): return .conflict
        case (let status, _): return .failed(SyncHTTP.failure(status: status, body: data))
        }
    }

    func feed(_ key: String, after version: Int64?) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        http.feed(url(key).appendingPathComponent("events"), after: version)
    }

    /// The version in a response's `ETag` (`"7"`).
    private static func version(_ response: HTTPURLResponse?) -> Int64? {
        guard let tag = response?.value(forHTTPHeaderField: "ETag"), tag.count >= 3, tag.first == "\"", tag.last == "\""
        else { return nil }
        return Int64(tag.dropFirst().dropLast())
    }
}
