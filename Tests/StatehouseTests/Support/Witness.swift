import Foundation
import Synchronization
@testable import Statehouse

/// An object whose deallocation can be observed through a weak reference.
final class Witness: Sendable {}
