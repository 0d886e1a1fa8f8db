// swift-tools-version:6.0
//
// Perimeter — a geofencing engine.
//
// Data flows one way: readers → engine → delivery. The module graph mirrors it;
// docs/architecture.md states which module may import which.
import PackageDescription

let package = Package(
    name: "Perimeter",
    products: [
        .library(name: "PerimeterGeometry", targets: ["PerimeterGeometry"]),
        .library(name: "PerimeterGeoJSON", targets: ["PerimeterGeoJSON"]),
        .library(name: "PerimeterIndex", targets: ["PerimeterIndex"]),
        .library(name: "PerimeterFences", targets: ["PerimeterFences"]),
        .library(name: "PerimeterEngine", targets: ["PerimeterEngine"]),
        .library(name: "PerimeterTracks", targets: ["PerimeterTracks"]),
        .executable(name: "perimeter", targets: ["perimeter"]),
        .library(name: "PerimeterService", targets: ["PerimeterService"]),
        .library(name: "PerimeterSQLite", targets: ["PerimeterSQLite"]),
        .library(name: "PerimeterWebhooks", targets: ["PerimeterWebhooks"]),
        .library(name: "PerimeterServer", targets: ["PerimeterServer"]),
        .library(name: "PerimeterNATS", targets: ["PerimeterNATS"]),
        .library(name: "PerimeterCluster", targets: ["PerimeterCluster"]),
        .executable(name: "perimeter-bench", targets: ["perimeter-bench"]),
    ],
    targets: [
        // MARK: Pure-Swift core: no I/O, no C modules.
        .target(name: "PerimeterGeometry"),
        .target(name: "PerimeterGeoJSON"),
        .target(name: "PerimeterIndex", dependencies: ["PerimeterGeometry"]),
        .target(name: "PerimeterFences", dependencies: ["PerimeterGeometry", "PerimeterGeoJSON", "PerimeterIndex"]),
        .target(name: "PerimeterEngine", dependencies: ["PerimeterFences", "PerimeterGeoJSON", "PerimeterGeometry"]),
        .target(name: "PerimeterTracks", dependencies: ["PerimeterEngine", "PerimeterGeoJSON", "PerimeterGeometry"]),
        .target(name: "PerimeterSVG", dependencies: ["PerimeterEngine", "PerimeterFences", "PerimeterGeometry"]),

        // MARK: Composition: command-line parsing and wiring, file I/O.
        .target(name: "PerimeterCLI", dependencies: [
            "PerimeterGeometry", "PerimeterGeoJSON", "PerimeterFences", "PerimeterEngine",
            "PerimeterTracks", "PerimeterSVG", "PerimeterServer", "PerimeterService", "PerimeterWebhooks",
            "PerimeterCluster",
        ]),
        .executableTarget(name: "perimeter", dependencies: ["PerimeterCLI"]),

        // MARK: Service: the library API and its durable store (SQLite is the only C dependency).
        .target(name: "PerimeterService", dependencies: ["PerimeterEngine", "PerimeterFences", "PerimeterGeoJSON", "PerimeterGeometry"]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "PerimeterSQLite", dependencies: [
            "PerimeterService", "CSQLite", "PerimeterEngine", "PerimeterFences", "PerimeterGeoJSON", "PerimeterGeometry",
        ]),
        .executableTarget(name: "perimeter-service-crash", dependencies: [
            "PerimeterSQLite", "PerimeterService", "PerimeterEngine", "PerimeterFences", "PerimeterGeoJSON",
        ]),

        // MARK: Server (docs/server.md): libmicrohttpd is imported by PerimeterHTTP only.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .target(name: "PerimeterHTTP", dependencies: ["CMicroHTTPD"]),
        // Webhook delivery: libcurl is imported by PerimeterHTTPClient only, libcrypto by PerimeterCrypto only.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "PerimeterHTTPClient", dependencies: ["CCurl"]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "PerimeterCrypto", dependencies: ["CCrypto"]),
        // Webhook delivery (docs/webhooks.md): model, dispatcher, workers, target policy, signing, stores.
        .target(name: "PerimeterWebhooks", dependencies: [
            "PerimeterHTTPClient", "PerimeterCrypto", "PerimeterService", "PerimeterSQLite", "PerimeterEngine",
            "PerimeterFences", "PerimeterGeoJSON",
        ]),
        .target(name: "PerimeterServer", dependencies: [
            "PerimeterHTTP", "PerimeterCrypto", "PerimeterWebhooks", "PerimeterService", "PerimeterSQLite", "PerimeterEngine",
            "PerimeterFences", "PerimeterGeoJSON", "PerimeterTracks",
        ]),

        // MARK: Cluster (docs/cluster.md): libnats is imported by PerimeterNATS only.
        .systemLibrary(name: "CNATS", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),
        .target(name: "PerimeterNATS", dependencies: ["CNATS"]),
        .target(name: "PerimeterCluster", dependencies: [
            "PerimeterNATS", "PerimeterEngine", "PerimeterFences", "PerimeterGeoJSON", "PerimeterGeometry", "PerimeterService",
        ]),

        // MARK: Benchmarks (make bench, make bench-smoke; docs/benchmarks.md).
        .target(name: "PerimeterBenchmarks", dependencies: [
            "PerimeterGeometry", "PerimeterGeoJSON", "PerimeterIndex", "PerimeterFences", "PerimeterEngine",
            "PerimeterService", "PerimeterSQLite", "PerimeterWebhooks", "PerimeterServer", "PerimeterNATS", "PerimeterCluster",
            "PerimeterTestSupport",
        ], path: "Benchmarks/PerimeterBenchmarks"),
        .executableTarget(name: "perimeter-bench", dependencies: ["PerimeterBenchmarks"], path: "Benchmarks/perimeter-bench"),

        // MARK: Examples (docs/service.md, "Coming from Mapbox"): built and tested by make test.
        .target(name: "MapboxTutorial", dependencies: ["PerimeterService", "PerimeterEngine", "PerimeterGeoJSON"],
                path: "Examples/MapboxTutorial"),

        // MARK: Tests
        .target(name: "PerimeterTestSupport", path: "Sources/PerimeterTestSupport"),
        .testTarget(name: "PerimeterBenchmarksTests", dependencies: ["PerimeterTestSupport", "PerimeterBenchmarks"]),
        .testTarget(name: "PerimeterGeometryTests", dependencies: ["PerimeterTestSupport", "PerimeterGeometry"]),
        .testTarget(name: "PerimeterGeoJSONTests", dependencies: ["PerimeterTestSupport", "PerimeterGeoJSON"]),
        .testTarget(name: "PerimeterIndexTests", dependencies: ["PerimeterTestSupport", "PerimeterIndex", "PerimeterGeometry"]),
        .testTarget(name: "PerimeterFencesTests", dependencies: [
            "PerimeterTestSupport", "PerimeterFences", "PerimeterGeoJSON", "PerimeterGeometry",
        ]),
        .testTarget(name: "PerimeterEngineTests", dependencies: [
            "PerimeterTestSupport", "PerimeterEngine", "PerimeterFences", "PerimeterGeometry",
        ]),
        .testTarget(name: "PerimeterTracksTests", dependencies: [
            "PerimeterTestSupport", "PerimeterTracks", "PerimeterEngine", "PerimeterGeometry", "PerimeterFences",
        ]),
        .testTarget(name: "PerimeterServiceTests", dependencies: [
            "PerimeterTestSupport", "PerimeterService", "PerimeterSQLite", "PerimeterEngine", "PerimeterFences",
            "PerimeterGeoJSON", "PerimeterGeometry", "PerimeterTracks",
        ]),
        .testTarget(name: "PerimeterSQLiteTests", dependencies: [
            "PerimeterTestSupport", "PerimeterSQLite", "PerimeterService", "perimeter-service-crash", "PerimeterEngine",
            "PerimeterFences", "PerimeterGeoJSON", "PerimeterGeometry",
        ]),
        .testTarget(name: "PerimeterServerTests", dependencies: [
            "PerimeterTestSupport", "PerimeterServer", "PerimeterWebhooks", "PerimeterHTTP", "PerimeterCrypto", "PerimeterService",
            "PerimeterSQLite", "CSQLite",
            "PerimeterEngine", "PerimeterFences", "PerimeterGeoJSON", "PerimeterGeometry", "PerimeterCluster", "PerimeterNATS",
        ]),
        .testTarget(name: "PerimeterWebhookTests", dependencies: [
            "PerimeterTestSupport", "PerimeterWebhooks", "PerimeterHTTPClient", "PerimeterCrypto", "PerimeterService",
            "PerimeterSQLite", "PerimeterEngine", "PerimeterFences", "PerimeterGeoJSON", "PerimeterGeometry",
        ]),
        .testTarget(name: "PerimeterNATSTests", dependencies: ["PerimeterTestSupport", "PerimeterNATS"]),
        .testTarget(name: "PerimeterClusterTests", dependencies: [
            "PerimeterTestSupport", "PerimeterCluster", "PerimeterNATS", "PerimeterEngine", "PerimeterFences", "PerimeterGeoJSON",
            "PerimeterGeometry", "PerimeterTracks", "perimeter",
        ]),
        .testTarget(name: "PerimeterCLITests", dependencies: ["PerimeterTestSupport", "PerimeterCLI", "perimeter"]),
        .testTarget(name: "MapboxTutorialTests", dependencies: [
            "MapboxTutorial", "PerimeterService", "PerimeterEngine", "PerimeterGeoJSON", "PerimeterTestSupport",
        ]),
    ]
)
