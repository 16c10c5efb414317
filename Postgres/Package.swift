// swift-tools-version: 6.1
import PackageDescription

// StatehousePostgres: Statehouse state shared across machines through PostgreSQL. A package of its own, so that
// Statehouse's users who do not use PostgreSQL never resolve or build SwiftNIO and postgres-nio (see README.md).
let package = Package(
    name: "StatehousePostgres",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StatehousePostgres", targets: ["StatehousePostgres"]),
        // For other packages' tests (timetrack's): a private server, never a system cluster.
        .library(name: "PostgresTestCluster", targets: ["PostgresTestCluster"]),
    ],
    dependencies: [
        // Named, because a path dependency is otherwise known by its folder name, which differs between clones.
        .package(name: "Statehouse", path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // `swift package generate-documentation`; a plugin only, nothing links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "StatehousePostgres",
            dependencies: [
                .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // The pool's own error type, which PostgresClient passes on when it cannot connect for a while.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                // SHA-256 of the keys; postgres-nio depends on swift-crypto already.
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // A private PostgreSQL server (initdb, pg_ctl) for the tests and the benchmark.
        .target(
            name: "PostgresTestCluster",
            dependencies: [
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "_StatehouseTestSupport", package: "Statehouse"),
            ],
            path: "Tests/PostgresTestCluster"
        ),
        // Another process on the same database: the other side of the multi-process tests.
        .executableTarget(
            name: "StatehousePostgresWorker",
            dependencies: ["StatehousePostgres", .product(name: "PostgresNIO", package: "postgres-nio")]
        ),
        // Release-mode figures: the storage's save and update beside a bare upsert through postgres-nio.
        .executableTarget(
            name: "StatehousePostgresBenchmarks",
            dependencies: [
                "StatehousePostgres", "PostgresTestCluster", .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .testTarget(
            name: "StatehousePostgresTests",
            dependencies: [
                "StatehousePostgres", "PostgresTestCluster", "StatehousePostgresWorker",
                .product(name: "_StatehouseTestSupport", package: "Statehouse"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
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
