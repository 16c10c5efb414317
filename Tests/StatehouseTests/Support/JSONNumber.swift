import Foundation

/// `number` as a storage holds it with the `.json` codec: what another process stores for a container of `Int`.
func jsonNumber(_ number: Int) -> Data {
    Data("\(number)".utf8)
}
