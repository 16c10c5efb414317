// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Statehouse",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Statehouse", targets: ["Statehouse"]),
        .library(name: "StatehouseTesting", targets: ["StatehouseTesting"]),
        .library(name: "StatehouseLogging", targets: ["StatehouseLogging"]),
        .library(name: "StatehouseSQLite", targets: ["StatehouseSQLite"]),
        .library(name: "StatehouseMetrics", targets: ["StatehouseMetrics"]),
        .library(name: "StatehouseSecure", targets: ["StatehouseSecure"]),
        // Not API: the test helpers, for the tests of the repository's other packages (Postgres/).
        .library(name: "_StatehouseTestSupport", targets: ["StatehouseTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/pointfreeco/swift-custom-dump", from: "1.7.3"),
        // `swift package generate-documentation`; a plugin only, nothing links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The core depends on the toolchain only (Foundation, Synchronization, Dispatch, Observation).
        .target(name: "Statehouse"),
        // TestStore and helpers for users' own tests, on Swift Testing; values and diffs in failure messages written
        // by swift-custom-dump, as TCA's users know them.
        .target(
            name: "StatehouseTesting",
            dependencies: ["Statehouse", .product(name: "CustomDump", package: "swift-custom-dump")]
        ),
        // The logging middleware; a module of its own so that the core depends on the toolchain only.
        .target(
            name: "StatehouseLogging",
            dependencies: ["Statehouse", .product(name: "Logging", package: "swift-log")]
        ),
        // Chosen container changes and store actions as swift-metrics counters and swift-log events; a module of its
        // own so that the core depends on the toolchain only.
        .target(
            name: "StatehouseMetrics",
            dependencies: [
                "Statehouse", .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // SQLite storage; a module of its own so that the core depends on the toolchain only.
        .target(
            name: "StatehouseSQLite",
            dependencies: ["Statehouse", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        // Writes to a file-backed container until killed: the child process of the persistence crash test.
        .executableTarget(name: "StatehouseCrashWriter", dependencies: ["Statehouse"]),
        // Ends a process with writes pending, by exit() inside a reducer or by SIGTERM: the exit tests' child.
        .executableTarget(name: "StatehouseExitWriter", dependencies: ["Statehouse"]),
        // Another process changing a file storage: the other side of the file-watching tests.
        .executableTarget(name: "StatehouseFileWorker", dependencies: ["Statehouse"]),
        // What the test targets share: a thread-safe recorder, polling with a deadline, finding helper executables,
        // and a swift-log handler that keeps what it is given.
        .target(
            name: "StatehouseTestSupport",
            dependencies: ["Statehouse", .product(name: "Logging", package: "swift-log")],
            path: "Tests/StatehouseTestSupport"
        ),
        .testTarget(
            name: "StatehouseTests",
            // StatehouseTesting for its ManualClock, which drives the time-based effects' tests, and the storage
            // conformance suite.
            dependencies: [
                "Statehouse", "StatehouseTesting", "StatehouseTestSupport", "StatehouseCrashWriter",
                "StatehouseExitWriter", "StatehouseFileWorker",
            ]
        ),
        .testTarget(name: "StatehouseTestingTests", dependencies: ["StatehouseTesting", "StatehouseTestSupport"]),
        .testTarget(name: "StatehouseLoggingTests", dependencies: ["StatehouseLogging", "StatehouseTestSupport"]),
        .testTarget(
            name: "StatehouseMetricsTests",
            dependencies: [
                "StatehouseMetrics", "StatehouseTestSupport", .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // Another process on the same database: the other side of the SQLite two-process tests.
        .executableTarget(
            name: "StatehouseSQLiteWorker",
            dependencies: ["StatehouseSQLite", "StatehouseTestSupport", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "StatehouseSQLiteTests",
            // StatehouseTesting for the storage conformance suite; GRDB to write databases the storage does not make.
            dependencies: [
                "StatehouseSQLite", "StatehouseTesting", "StatehouseTestSupport", "StatehouseSQLiteWorker",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Encrypted storage on swift-crypto (and the Keychain on Apple platforms); a module of its own so that the
        // core depends on the toolchain only.
        .target(
            name: "StatehouseSecure",
            dependencies: ["Statehouse", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // Writes to an encrypted container until killed: the child process of the secure storage's crash test.
        .executableTarget(name: "StatehouseSecureCrashWriter", dependencies: ["StatehouseSecure"]),
        .testTarget(
            name: "StatehouseSecureTests",
            // StatehouseTesting for the storage conformance suite.
            dependencies: ["StatehouseSecure", "StatehouseTesting", "StatehouseTestSupport", "StatehouseSecureCrashWriter"]
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
