import Statehouse


/// Every scope of these tests is made here: one place in the source, so repeated calls share the cached scope.
func countedChildScope(
    of parent: Store<CountedParent, CountedParentAction>,
    at keyPath: any KeyPath<CountedParent, Counter> & Sendable = \.child
) -> Store<Counter, CounterAction> {
    parent.scope(state: keyPath, action: CountedParentAction.child)
}
