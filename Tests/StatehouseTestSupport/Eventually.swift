/// Polls `condition` until it holds or `timeout` passes; returns whether it held. The default deadline is generous:
/// the whole suite under ThreadSanitizer on two cores has kept tasks from running for more than 5 s.
public func eventually(timeout: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}
