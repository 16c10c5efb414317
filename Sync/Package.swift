// swift-tools-version: 6.1
import PackageDescription

// Sync for apps: a server that holds the authoritative copy of named stores (StatehouseServer, on Hummingbird), and a
// client whose stores work offline and follow it (StatehouseSync, on Foundation's URLSession: an app for Apple
// platforms that uses it builds no SwiftNIO; on Linux its feeds use AsyncHTTPClient). A package of its own, so that Statehouse's users who do not sync never resolve a web server.
let package = Package(
    name: "StatehouseSync",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "StatehouseSync", targets: ["StatehouseSync"]),
        .library(name: "StatehouseServer", targets: ["StatehouseServer"]),
        // Several server instances on one PostgreSQL database.
        .library(name: "StatehouseServerPostgres", targets: ["StatehouseServerPostgres"]),
    ],
    dependencies: [
        // Named, because a path dependency is otherwise known by its folder name, which differs between clones.
        .package(name: "Statehouse", path: ".."),
        .package(name: "StatehousePostgres", path: "../Postgres"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The feeds' client on Linux only, where FoundationNetworking's URLSession keeps a processor busy for as long
        // as a response streams (see `LinuxFeedClient`).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // `swift package generate-documentation`; a plugin only, nothing links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // What the client and the server say to each other: the bodies of the routes in openapi.json.
        .target(name: "StatehouseSyncWire"),
        .target(
            name: "StatehouseSync",
            dependencies: [
                "StatehouseSyncWire", .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(
            name: "StatehouseServer",
            dependencies: [
                "StatehouseSyncWire",
                .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // A feed ends when the server shuts down gracefully, instead of holding the shutdown up.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // SHA-256 of the tokens, which the server keeps instead of the tokens.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("openapi.json")]
        ),
        // A store hosted on an action log in PostgreSQL, shared by several server instances (`ReplicatedStore`).
        .target(
            name: "StatehouseServerPostgres",
            dependencies: [
                "StatehouseServer", "StatehouseSyncWire", .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "StatehousePostgres", package: "StatehousePostgres"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The store the tests sync, its reducers and tokens, and a server on loopback, shared with the helper
        // processes and the benchmarks.
        .target(
            name: "SyncFixtures",
            dependencies: [
                "StatehouseServer", "StatehouseServerPostgres", .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "StatehousePostgres", package: "StatehousePostgres"),
                .product(name: "PostgresTestCluster", package: "StatehousePostgres"),
            ],
            path: "Tests/SyncFixtures"
        ),
        // `swift run -c release --package-path Sync StatehouseSyncBenchmarks`: the figures in the README.
        .executableTarget(
            name: "StatehouseSyncBenchmarks",
            dependencies: [
                "StatehouseSync", "StatehouseServer", "SyncFixtures",
                .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "PostgresTestCluster", package: "StatehousePostgres"),
            ],
            path: "Benchmarks/StatehouseSyncBenchmarks"
        ),
        // The other processes of the tests that kill a server or an app mid-push.
        .executableTarget(
            name: "StatehouseSyncServerWorker",
            dependencies: [
                "StatehouseServer", "StatehouseServerPostgres", "SyncFixtures",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "StatehousePostgres", package: "StatehousePostgres"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .executableTarget(
            name: "StatehouseSyncClientWorker",
            dependencies: ["StatehouseSync", "SyncFixtures", .product(name: "Statehouse", package: "Statehouse")]
        ),
        .testTarget(
            name: "StatehouseSyncTests",
            dependencies: [
                "StatehouseSync", "StatehouseServer", "StatehouseSyncWire", "SyncFixtures",
                "StatehouseSyncServerWorker", "StatehouseSyncClientWorker",
                .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "_StatehouseTestSupport", package: "Statehouse"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // A storage that fails on cue, by a trigger.
                .product(name: "GRDB", package: "GRDB.swift"),
                // Server instances on one private PostgreSQL cluster.
                "StatehouseServerPostgres",
                .product(name: "StatehousePostgres", package: "StatehousePostgres"),
                .product(name: "PostgresTestCluster", package: "StatehousePostgres"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        // SE-0335: spell existential types `any P`.
        .enableUpcomingFeature("ExistentialAny"),
        // SE-0444: a file sees only the members of modules it imports itself.
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
