import Testing
import Statehouse

/// What an `update` body may not do, and how it fails. Issue 10 asked for a clear failure where it is cheap to
/// detect: a body that uses its own container used to stop the process with the lock's "Recursive call to lock
/// Mutex", which says nothing of the cause.
@Suite("Update body misuse")
struct UpdateBodyMisuseTests {
    @Test func readingItsOwnContainerStopsWithAMessageThatSaysWhatToDo() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let count = StateContainer(0, key: "misuse.read")
            count.update { $0 = count.value + 1 }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("the update body of the container \"misuse.read\" used that same container"))
    }

    @Test func changingItsOwnContainerStopsWithTheSameMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let count = StateContainer(0, key: "misuse.modify")
            count.update { _ in count.modify(1) }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("change the value through the body's inout argument"))
    }

    @Test func otherThreadsWaitingForTheLockAreNotMistakenForMisuse() async {
        let count = StateContainer(0, key: "misuse.contended")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<20_000 {
                        count.update { $0 += 1 }
                        _ = count.value
                    }
                }
            }
        }
        #expect(count.value == 80_000)
    }
}
