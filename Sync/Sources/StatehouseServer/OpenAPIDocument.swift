import Foundation

/// `openapi.json`, the wire protocol's one description, as the package ships it: the server serves these bytes at
/// `/openapi.json`, and the tests check the server's answers against it.
enum OpenAPIDocument {
    static let bytes: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
            let data = try? Data(contentsOf: url)
        else { preconditionFailure("openapi.json is missing from StatehouseServer's resources") }
        return Array(data)
    }()
}
