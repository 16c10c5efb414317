// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Statehouse",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Statehouse", targets: ["Statehouse"]),
    ],
    targets: [
        // The core depends on the toolchain only (Foundation, Synchronization, Dispatch, Observation).
        .target(name: "Statehouse"),
        .testTarget(name: "StatehouseTests", dependencies: ["Statehouse"]),
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
