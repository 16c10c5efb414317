import Foundation
import Hummingbird
import TimeTrackerCore

/// `GET /api/report?day=2026-11-23&days=7&tz=Europe/Paris`: ``TimeReport`` as JSON, what `timetrack report --json`
/// prints. The page asks in the browser's own zone; without `tz`, the server's; without `day`, today.
extension ProjectsAPI {
    func registerReport(on group: RouterGroup<BasicRequestContext>) {
        group.get("report") { request, _ in
            let query = request.uri.queryParameters
            var zone = TimeZone.current
            var label = zone.identifier
            if let identifier = query.get("tz") {
                guard let named = TimeZone(identifier: String(identifier)) else {
                    return APIResponse.error(.badRequest, "tz is a time zone such as Europe/Paris.")
                }
                (zone, label) = (named, String(identifier))
            }
            guard let days = query.get("days").map({ Int(String($0)) }) ?? 1, (1...31).contains(days) else {
                return APIResponse.error(.badRequest, "days is a whole number from 1 to 31.")
            }
            var start = Date()
            if let day = query.get("day") {
                guard let date = TimeReport.day(String(day), in: zone) else {
                    return APIResponse.error(.badRequest, "day is a date such as 2026-11-28.")
                }
                start = date
            }
            var report: TimeReport
            do throws(TrackerError) {
                report = try await tracker.report(days: days, from: start, in: zone)
            } catch {
                return APIResponse.error(error.httpStatus, error.description)
            }
            // The zone as it was asked for: Foundation calls UTC "GMT".
            report.timeZone = label
            return try APIResponse.json(report)
        }
    }
}
