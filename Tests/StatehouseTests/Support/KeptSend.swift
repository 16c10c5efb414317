import Statehouse

/// A `Send` an effect keeps for later, as one that registers a callback does.
final class KeptSend<Action: Sendable>: Sendable {
    private let send = Locked<Send<Action>?>(nil)

    func keep(_ send: Send<Action>) {
        self.send.withLock { $0 = send }
    }

    func callAsFunction(_ action: Action) {
        send.withLock { $0 }?(action)
    }
}
