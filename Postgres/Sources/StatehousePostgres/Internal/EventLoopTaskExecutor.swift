import NIOCore

/// Runs tasks' jobs on a SwiftNIO event loop instead of Swift's cooperative pool.
///
/// The storage's synchronous operations block their caller while a task talks to PostgreSQL. Were that task on the
/// cooperative pool (one thread per core), callers blocking every pool thread would leave it nowhere to run: a
/// deadlock. An event loop never blocks, so its thread is always free for these short jobs.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
