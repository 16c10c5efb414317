/// Polls `condition` until it holds or `timeout` passes; returns whether it held. The default deadline is generous:
/// what is sure to happen can take many seconds on a busy machine, and waiting ends as soon as it does. A condition
/// that is costly to check (one that runs psql) is checked less often, `every` apart.
public func eventually(
    timeout: Duration = .seconds(60), every interval: Duration = .milliseconds(5), _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: interval)
    }
    return true
}

/// How often `eventually` checks a condition that runs psql: a process every few milliseconds would load the machine.
public let psqlPolling = Duration.milliseconds(50)
