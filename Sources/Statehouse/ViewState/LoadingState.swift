/// The state of data a screen loads: not asked for yet, loading (perhaps with older data), loaded, or failed
/// (perhaps with older data).
///
/// ```swift
/// var jobs: LoadingState<[Job], APIError> = .idle
/// jobs = .loading(nil)                 // first load: show a placeholder
/// jobs = .loaded(fetched)              // show the content
/// jobs = .loading(jobs.value)          // refresh: keep showing the content, with an indicator
/// jobs = .failed(error, jobs.value)    // keep the content, show the error as an alert
/// ```
///
/// ``presentation`` says what a screen should show for each case, so that every screen agrees.
public enum LoadingState<Value, Failure: Error> {
    /// Nothing was asked for yet.
    case idle
    /// Loading, with the data from before if there is some.
    case loading(Value?)
    /// Loaded.
    case loaded(Value)
    /// Loading failed, with the data from before if there is some.
    case failed(Failure, Value?)
}

extension LoadingState {
    /// The data to show, if there is some: loaded, or kept from before while loading or after a failure.
    public var value: Value? {
        switch self {
        case .idle: nil
        case .loading(let value): value
        case .loaded(let value): value
        case .failed(_, let value): value
        }
    }

    /// The error, when loading failed.
    public var error: Failure? {
        if case .failed(let error, _) = self { error } else { nil }
    }

    /// Whether a load is in progress.
    public var isLoading: Bool {
        if case .loading = self { true } else { false }
    }

    /// Whether the loading placeholder should be hidden: it shows only while there is no data and no error yet
    /// (`idle` included: a screen that has not asked yet shows the placeholder, it does not crash).
    public var shouldHideLoadingView: Bool {
        if case .placeholder = presentation { false } else { true }
    }

    /// Whether the error placeholder should be hidden: it shows only for a failure with no data to show (a failure
    /// with data is shown as an alert over the data).
    public var shouldHideErrorView: Bool {
        if case .errorPlaceholder = presentation { false } else { true }
    }

    /// What a screen should show.
    public var presentation: LoadingPresentation<Value, Failure> {
        switch self {
        case .idle, .loading(.none): .placeholder
        case .loading(.some(let value)): .content(value, refreshing: true)
        case .loaded(let value): .content(value, refreshing: false)
        case .failed(let error, .some(let value)): .contentWithError(value, error)
        case .failed(let error, .none): .errorPlaceholder(error)
        }
    }

    /// The same state with its data transformed.
    public func map<NewValue>(_ transform: (Value) throws -> NewValue) rethrows -> LoadingState<NewValue, Failure> {
        switch self {
        case .idle: .idle
        case .loading(let value): .loading(try value.map(transform))
        case .loaded(let value): .loaded(try transform(value))
        case .failed(let error, let value): .failed(error, try value.map(transform))
        }
    }

    /// The same state with its error transformed.
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> LoadingState<Value, NewFailure> {
        switch self {
        case .idle: .idle
        case .loading(let value): .loading(value)
        case .loaded(let value): .loaded(value)
        case .failed(let error, let value): .failed(transform(error), value)
        }
    }
}

/// What a screen shows for a ``LoadingState``.
public enum LoadingPresentation<Value, Failure: Error> {
    /// No data yet: a loading placeholder.
    case placeholder
    /// The data, with a refreshing indicator while a newer version loads.
    case content(Value, refreshing: Bool)
    /// The data, with the error of the last load as an alert.
    case contentWithError(Value, Failure)
    /// No data and an error: an error placeholder.
    case errorPlaceholder(Failure)
}

extension LoadingState: Equatable where Value: Equatable, Failure: Equatable {}
extension LoadingState: Hashable where Value: Hashable, Failure: Hashable {}
extension LoadingState: Sendable where Value: Sendable, Failure: Sendable {}
extension LoadingState: Codable where Value: Codable, Failure: Codable {}
extension LoadingPresentation: Equatable where Value: Equatable, Failure: Equatable {}
extension LoadingPresentation: Sendable where Value: Sendable, Failure: Sendable {}
