/// A view that renders from one `Equatable` view state, selected from a store.
///
/// ```swift
/// final class ProfileView: StatefulView {
///     func render(state: Profile) { nameLabel.text = state.name }
/// }
/// profileView.connect(to: appStore) { $0.profile }   // renders now, then whenever the profile changes
/// ```
///
/// The view renders only when its view state changed, so a store change elsewhere costs it one comparison.
public protocol StatefulView: StoreSubscribing {
    associatedtype ViewState: Equatable & Sendable

    /// Shows `state`.
    func render(state: ViewState)
}

extension StatefulView {
    /// Renders what `viewState` selects from `store`'s state now, and again whenever it changes, while the view
    /// lives. Connecting to the same store again replaces the previous connection.
    public func connect<State, Action>(
        to store: Store<State, Action>,
        on delivery: Delivery = .synchronous,
        viewState: @escaping @Sendable (State) -> ViewState
    ) {
        keep(subscriptionTo: store, select: viewState, isDuplicate: ==, on: delivery) { view, state in
            view.render(state: state)
        }
    }

    /// Renders `store`'s state, when it is this view's state.
    public func connect<Action>(to store: Store<ViewState, Action>, on delivery: Delivery = .synchronous) {
        connect(to: store, on: delivery) { $0 }
    }
}
