import Foundation
import StatehouseServer
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// The server behind a TLS-terminating proxy, as the README says to reach it from other machines: nginx with a
/// self-signed certificate in front of a server on loopback. A client that trusts the certificate pushes, reads and
/// follows the feed through it, its events unbuffered; one that does not is refused the connection. The client is
/// curl: Foundation's `URLSession` on Linux trusts only the system's certificate store (see the README).
@Suite struct BehindTLSProxyTests {
    @Test func aClientThatTrustsTheCertificatePushesAndFollowsThroughTheProxy() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let proxy = try await TLSProxy.start(forwardingTo: server.port)
            defer { proxy.stop() }

            let push = try await proxy.curl(
                "-X", "POST", "--data-binary", #"{"client":"over-tls","actions":[{"seq":1,"action":{"add":{"_0":"secure"}}}]}"#,
                "-H", "Content-Type: application/json", path: "stores/tracker/actions"
            )
            #expect(push.status == 200, "\(push.body)")
            #expect(try JSONDecoder().decode(PushAnswer.self, from: Data(push.body.utf8)).handledThrough == 1)

            let feed = try HelperProcess(executable: TLSProxy.curl, proxy.arguments(path: "stores/tracker/events?client=over-tls") + ["-N"])
            #expect(await feed.line { $0 == "event: snapshot" } != nil)
            #expect(try await server.push(client: "other", [(1, .add("after the feed opened"))]).status == 200)
            // Through the proxy as it happens: nginx buffers nothing (`proxy_buffering off`).
            #expect(await feed.line { $0 == "event: change" } != nil)
            feed.kill()

            let snapshot = try await proxy.curl(path: "stores/tracker?client=over-tls")
            #expect(try JSONDecoder().decode(StoreSnapshot<Tracker>.self, from: Data(snapshot.body.utf8)).state.entries
                == ["secure", "after the feed opened"])
        }
    }

    @Test func aClientThatDoesNotTrustTheCertificateIsRefused() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let proxy = try await TLSProxy.start(forwardingTo: server.port)
            defer { proxy.stop() }
            let untrusting = try HelperProcess(
                executable: TLSProxy.curl, ["-sS", "-o", "/dev/null", "https://127.0.0.1:\(proxy.port)/openapi.json"]
            )
            // curl's "peer certificate cannot be authenticated".
            #expect(await untrusting.exitStatus() == 60)
            #expect(try await proxy.curl(path: "openapi.json").status == 200)
        }
    }
}

/// nginx on a free loopback port, with a self-signed certificate for 127.0.0.1 made for the test, forwarding to a
/// sync server with the settings the README gives.
private struct TLSProxy {
    static let curl = URL(fileURLWithPath: "/usr/bin/curl")
    static let nginx = URL(fileURLWithPath: "/usr/sbin/nginx")

    let port: Int
    let folder: URL
    let nginx: HelperProcess

    var certificate: String { folder.appendingPathComponent("cert.pem").path }

    static func start(forwardingTo upstream: Int) async throws -> TLSProxy {
        for program in [curl, nginx] where !FileManager.default.isExecutableFile(atPath: program.path) {
            throw ProxyDidNotStart(reason: "\(program.path) is missing: scripts/prerequisites installs it.")
        }
        let folder = Fixture.temporaryFolder()
        let openssl = try HelperProcess(executable: URL(fileURLWithPath: "/usr/bin/openssl"), [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", folder.appendingPathComponent("key.pem").path, "-out", folder.appendingPathComponent("cert.pem").path,
            "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        guard await openssl.exitStatus() == 0 else { throw ProxyDidNotStart(reason: "openssl could not make a certificate") }
        let port = try freeLoopbackPort()
        let configuration = folder.appendingPathComponent("nginx.conf")
        try Self.configuration(folder: folder, port: port, upstream: upstream).write(to: configuration, atomically: true, encoding: .utf8)
        let nginx = try HelperProcess(executable: nginx, ["-c", configuration.path, "-p", folder.path + "/"])
        let proxy = TLSProxy(port: port, folder: folder, nginx: nginx)
        let listening = await eventually {
            (try? Data(contentsOf: folder.appendingPathComponent("nginx.pid"))) != nil
        }
        guard listening, await proxy.answers() else {
            nginx.kill()
            let log = (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            throw ProxyDidNotStart(reason: log)
        }
        return proxy
    }

    /// What the README's TLS section shows, with the test's paths and ports.
    private static func configuration(folder: URL, port: Int, upstream: Int) -> String {
        let path = folder.path
        return """
            daemon off;
            master_process off;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log;
            events {}
            http {
                access_log off;
                client_body_temp_path \(path)/body;
                proxy_temp_path \(path)/proxy;
                server {
                    listen 127.0.0.1:\(port) ssl;
                    ssl_certificate \(path)/cert.pem;
                    ssl_certificate_key \(path)/key.pem;
                    location / {
                        proxy_pass http://127.0.0.1:\(upstream);
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_buffering off;
                        proxy_read_timeout 1h;
                    }
                }
            }
            """
    }

    func arguments(path: String) -> [String] {
        ["-sS", "--cacert", certificate, "-H", "Authorization: Bearer \(Fixture.writer)", "https://127.0.0.1:\(port)/\(path)"]
    }

    /// A request through the proxy: its status (the last line curl writes), and its body.
    func curl(_ options: String..., path: String) async throws -> (status: Int, body: String) {
        let process = try HelperProcess(executable: Self.curl, Array(options) + arguments(path: path) + ["-w", "\n%{http_code}"])
        _ = await process.exitStatus()
        var lines = process.lines
        let status = lines.popLast().flatMap { Int($0) } ?? 0
        return (status, lines.joined(separator: "\n"))
    }

    /// Whether a request gets through, tried until one does or a generous deadline passes (nginx has written its
    /// pid file, and listens a moment later).
    private func answers() async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if (try? await curl(path: "openapi.json"))?.status == 200 { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    func stop() {
        nginx.kill()
    }

    struct ProxyDidNotStart: Error {
        var reason: String
    }
}
