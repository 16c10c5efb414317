/// A stateful view for data that loads: it shows or hides a loading placeholder and an error placeholder, raises an
/// alert for an error over data, and renders the data when there is some.
///
/// The conforming type says how to make its two placeholders and how to show them; the mixin keeps one of each for
/// the view's lifetime (through ``AssociatedObjects``) and decides, from ``LoadingState/presentation``, what is
/// visible. It is neutral about the UI framework: a `UIViewController` adds and removes child view controllers, a
/// terminal app prints.
///
/// ```swift
/// final class JobsScreen: LoadingStatefulView {
///     func render(state: LoadingState<[Job], APIError>) {
///         render(state: state) { jobs in table.show(jobs) }
///     }
///     func makeLoadingView() -> Spinner { Spinner() }
///     func makeErrorView() -> ErrorBanner { ErrorBanner() }
///     func setLoadingView(_ view: Spinner, visible: Bool) { view.isHidden = !visible }
///     func setErrorView(_ view: ErrorBanner, visible: Bool, error: APIError?) { … }
///     func presentAlert(for error: APIError) { … }
/// }
/// ```
public protocol LoadingStatefulView: StatefulView where ViewState == LoadingState<LoadedValue, LoadingFailure> {
    associatedtype LoadedValue: Equatable & Sendable
    associatedtype LoadingFailure: Error & Equatable & Sendable
    associatedtype LoadingView: AnyObject
    associatedtype ErrorView: AnyObject

    /// Shows `state`, usually by calling ``render(state:content:)``. (Restated from ``StatefulView`` so that the
    /// compiler infers `LoadedValue` and `LoadingFailure` from it.)
    func render(state: LoadingState<LoadedValue, LoadingFailure>)
    /// Makes the placeholder shown while there is nothing to show yet; called once per view.
    func makeLoadingView() -> LoadingView
    /// Makes the placeholder shown when loading failed with nothing to show; called once per view.
    func makeErrorView() -> ErrorView
    /// Puts the loading placeholder on screen, or takes it off.
    func setLoadingView(_ view: LoadingView, visible: Bool)
    /// Puts the error placeholder on screen for `error`, or takes it off (`error` is then `nil`).
    func setErrorView(_ view: ErrorView, visible: Bool, error: LoadingFailure?)
    /// Shows `error` over the data still on screen (an alert); does nothing by default.
    func presentAlert(for error: LoadingFailure)
    /// Shows or hides an indicator that newer data is loading while the current data shows; does nothing by default.
    func setRefreshing(_ refreshing: Bool)
}

private let loadingViewKey = AssociatedKey<AnyObject>()
private let errorViewKey = AssociatedKey<AnyObject>()

extension LoadingStatefulView {
    public func presentAlert(for error: LoadingFailure) {}
    public func setRefreshing(_ refreshing: Bool) {}

    /// The view's loading placeholder, made on first use.
    public var loadingView: LoadingView {
        placeholder(for: loadingViewKey, make: makeLoadingView)
    }

    /// The view's error placeholder, made on first use.
    public var errorView: ErrorView {
        placeholder(for: errorViewKey, make: makeErrorView)
    }

    /// The placeholder stored under `key`, made and stored by `make` the first time. (The keys are typed
    /// `AnyObject` because a generic protocol cannot have a stored key per conforming type.)
    private func placeholder<View: AnyObject>(for key: AssociatedKey<AnyObject>, make: () -> View) -> View {
        if let view = associatedValue(for: key) as? View { return view }
        let view = make()
        setAssociatedValue(view, for: key)
        return view
    }

    /// Shows and hides the placeholders for `state`, and calls `content` with the data when there is some.
    public func render(state: LoadingState<LoadedValue, LoadingFailure>, content: (LoadedValue) -> Void) {
        switch state.presentation {
        case .placeholder:
            setErrorView(errorView, visible: false, error: nil)
            setLoadingView(loadingView, visible: true)
        case .content(let value, let refreshing):
            setLoadingView(loadingView, visible: false)
            setErrorView(errorView, visible: false, error: nil)
            setRefreshing(refreshing)
            content(value)
        case .contentWithError(let value, let error):
            setLoadingView(loadingView, visible: false)
            setErrorView(errorView, visible: false, error: nil)
            setRefreshing(false)
            content(value)
            presentAlert(for: error)
        case .errorPlaceholder(let error):
            setLoadingView(loadingView, visible: false)
            setErrorView(errorView, visible: true, error: error)
        }
    }
}
