// `eventually`, `RawConnection` and the other helpers every package's tests share.
@_exported import StatehouseTestSupport

/// How often `eventually` checks a condition that runs psql: a process every few milliseconds would load the machine.
public let psqlPolling = Duration.milliseconds(50)
