/// Polls `condition` until it holds or `timeout` passes; returns whether it held. The default deadline is generous:
/// the whole suite under ThreadSanitizer on two cores has kept a store's background thread from draining its queue
/// for more than a minute. A condition that is costly to check (one that runs a process) is checked less often,
/// `every` apart; one that throws ends the wait with its error.
public func eventually(
    timeout: Duration = .seconds(120),
    every interval: Duration = .milliseconds(1),
    _ condition: () throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try condition()
}

/// ``eventually(timeout:every:_:)`` for a condition that awaits: one that asks a server.
public func eventuallyAsync(
    timeout: Duration = .seconds(120),
    every interval: Duration = .milliseconds(5),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}
