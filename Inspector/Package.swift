// swift-tools-version: 6.1
import PackageDescription

// The Statehouse Inspector: a live page for any store and container (StatehouseInspector, on Hummingbird). A package
// of its own, so that Statehouse's users who do not inspect never resolve a web server.
let package = Package(
    name: "StatehouseInspector",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StatehouseInspector", targets: ["StatehouseInspector"]),
    ],
    dependencies: [
        // Named, because a path dependency is otherwise known by its folder name, which differs between clones.
        .package(name: "Statehouse", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // `swift package generate-documentation`; a plugin only, nothing links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "StatehouseInspector",
            dependencies: [
                .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                // Locks on pthread mutexes, which ThreadSanitizer sees (it does not see `Synchronization.Mutex` on
                // Linux): the package's tests run under it.
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // A page's feed ends when the inspector stops, instead of holding the stop up.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A process with an attached store and container, for the browser test and the memory test: prints the
        // inspector's URL, then acts on the commands it reads.
        .executableTarget(
            name: "StatehouseInspectorDemo",
            dependencies: ["StatehouseInspector", .product(name: "Statehouse", package: "Statehouse")]
        ),
        // `swift run -c release --package-path Inspector StatehouseInspectorBenchmarks`: the figures in the README.
        .executableTarget(
            name: "StatehouseInspectorBenchmarks",
            dependencies: ["StatehouseInspector", .product(name: "Statehouse", package: "Statehouse")],
            path: "Benchmarks/StatehouseInspectorBenchmarks"
        ),
        .testTarget(
            name: "StatehouseInspectorTests",
            dependencies: [
                "StatehouseInspector", "StatehouseInspectorDemo", .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "_StatehouseTestSupport", package: "Statehouse"),
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
