// swift-tools-version: 6.2
import PackageDescription

// timetrack: the time tracker of the unidirectional-data-flow article, built on Statehouse. A package of its own, so
// that Statehouse's users never build a web server to get a state container.
let package = Package(
    name: "TimeTracker",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "timetrack", targets: ["timetrack"]),
    ],
    // The PostgreSQL backend (`--database postgres://...`) is a trait: without it, the app builds no postgres-nio and
    // no BoringSSL, which took most of a first build's minutes. scripts/test builds and tests with it.
    traits: [
        .trait(name: "PostgreSQL", description: "The PostgreSQL backend: timetrack --database postgres://..."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(name: "Statehouse", path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // `--database postgres://…`; Hummingbird brings SwiftNIO already. The Postgres package (named, since a path
        // dependency is otherwise known by its folder's name) gives the tests a private PostgreSQL server.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(name: "StatehousePostgres", path: "../../Postgres"),
        // `serve --inspect`: the inspector's page on the tracker's store.
        .package(name: "StatehouseInspector", path: "../../Inspector"),
        // `serve` hosts the tracker for apps that sync with it; `--remote` follows such a server.
        .package(name: "StatehouseSync", path: "../../Sync"),
    ],
    targets: [
        // The database, the rules, the actions and the store: everything but the ways in (CLI, web).
        .target(
            name: "TimeTrackerCore",
            dependencies: [
                .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "StatehouseSQLite", package: "Statehouse"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["PostgreSQL"])),
            ]
        ),
        // The live web page and the JSON API.
        .target(
            name: "TimeTrackerWeb",
            dependencies: [
                "TimeTrackerCore",
                .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // The Host and token rules its guard shares with the inspector's.
                .product(name: "StatehouseInspector", package: "StatehouseInspector"),
                .product(name: "StatehouseServer", package: "StatehouseSync"),
            ]
        ),
        .executableTarget(
            name: "timetrack",
            dependencies: [
                "TimeTrackerCore", "TimeTrackerWeb",
                .product(name: "Statehouse", package: "Statehouse"),
                // `make-test` writes a test with Recording.testSource.
                .product(name: "StatehouseTesting", package: "Statehouse"),
                .product(name: "StatehouseInspector", package: "StatehouseInspector"),
                .product(name: "StatehouseSync", package: "StatehouseSync"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // What the test targets share: temporary databases, a clock to move by hand, an event-stream client.
        .target(
            name: "TimeTrackerTestSupport",
            dependencies: [
                "TimeTrackerCore", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "_StatehouseTestSupport", package: "Statehouse"),
                .product(
                    name: "PostgresTestCluster", package: "StatehousePostgres", condition: .when(traits: ["PostgreSQL"])
                ),
            ],
            path: "Tests/TimeTrackerTestSupport"
        ),
        .testTarget(
            name: "TimeTrackerCoreTests",
            dependencies: [
                "TimeTrackerCore", "TimeTrackerTestSupport", .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "StatehouseTesting", package: "Statehouse"),
            ]
        ),
        .testTarget(
            name: "TimeTrackerWebTests",
            dependencies: [
                "TimeTrackerWeb", "TimeTrackerTestSupport",
                .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // Runs the built `timetrack` executable, as a user would.
        .testTarget(
            name: "TimeTrackerCLITests",
            dependencies: [
                "timetrack", "TimeTrackerCore", "TimeTrackerTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Statehouse", package: "Statehouse"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Warnings are errors in the app's own targets, whatever command builds them. scripts/test and scripts/timetrack
// pass `-Xswiftc -warnings-as-errors` as well (scripts/build-settings), for the repository's other packages.
for target in package.targets {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .treatAllWarnings(as: .error),
    ]
}
