// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "StatehouseBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named, because a path dependency is otherwise known by its folder name, which differs between clones.
        .package(name: "Statehouse", path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
    ],
    targets: [
        // Swift's Glibc module does not include <malloc.h>, which the memory rows need.
        .target(name: "CHeapStatistics"),
        .executableTarget(
            name: "StatehouseBenchmarks",
            dependencies: [
                .product(name: "Statehouse", package: "Statehouse"),
                .product(name: "StatehouseTesting", package: "Statehouse"),
                .product(name: "StatehouseSQLite", package: "Statehouse"),
                .product(name: "StatehouseSecure", package: "Statehouse"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                "CHeapStatistics",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
