/// Polls `condition` until it holds or `timeout` passes; returns whether it held. The default deadline is generous:
/// the whole suite under ThreadSanitizer on two cores has kept a store's background thread from draining its queue
/// for more than a minute.
public func eventually(timeout: Duration = .seconds(120), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}
