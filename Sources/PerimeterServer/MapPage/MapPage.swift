import PerimeterHTTP

/// The live map page served at `/`: every fence drawn in Web Mercator and filled with the colour of its
/// last event, devices as moving dots, a banner with the last event, an event log, a device filter and
/// a panel that starts simulated drives (`/v1/simulations`). Self-contained (no CDN, works offline);
/// an optional base map comes from `?tiles=https://…/{z}/{x}/{y}.png`.
///
/// Query parameters of the page: `tiles` (tile URL template), `token` (bearer token sent with every API
/// call, kept in the session), `radius` (metres drawn for Point and line fences without a radius, 300,
/// the service's default radius).
///
/// The DOM is made for assertions: each fence is `<g data-fence-id="…" data-fill="rgba(…)">`, each
/// device `<g data-device-id="…">`, the banner is `#banner`, the log `#log`; `<body>` carries
/// `data-fences` (`loading`, `ready`, `error`), `data-fence-count` and `data-stream` (`connecting`,
/// `open`, `retrying`).
public enum MapPage {
    /// The paths the page answers: `/` (and `/index.html`), `/map.js`, `/map.css`.
    public static let paths: Set<String> = ["/", "/index.html", "/map.js", "/map.css"]

    /// The response for a `GET` (or `HEAD`) of `path`, or `nil` when the page does not serve that path.
    /// The page is public: it holds no data; its API calls carry the user's token.
    public static func response(for path: String) -> HTTPResponse? {
        switch path {
        case "/", "/index.html":
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", bytes: Array(html.utf8),
                                headers: commonHeaders + [("Content-Security-Policy", contentSecurityPolicy)])
        case "/map.js":
            return HTTPResponse(status: 200, contentType: "text/javascript; charset=utf-8", bytes: Array(script.utf8),
                                headers: commonHeaders)
        case "/map.css":
            return HTTPResponse(status: 200, contentType: "text/css; charset=utf-8", bytes: Array(style.utf8),
                                headers: commonHeaders)
        default:
            return nil
        }
    }

    /// Scripts and styles only from the server itself; images also from `http(s)` tile servers.
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https: http:; connect-src 'self'; frame-ancestors 'none'"

    static let commonHeaders: [(name: String, value: String)] = [
        ("Cache-Control", "no-cache"),
        ("X-Content-Type-Options", "nosniff"),
    ]
}
