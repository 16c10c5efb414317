// A session recorded by Statehouse (7 actions), replayed through TestStore: each step
// asserts the state its action led to. Made by Recording.testSource; make it again rather than edit it.

import Foundation
import StatehouseTesting
import Testing
@testable import TimeTrackerCore

@Test func replaysARecordedTimetrackSession() async throws {
    func decoded<Value: Decodable>(_ type: Value.Type, _ json: String) throws -> Value {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }
    let store = TestStore(
        initialState: try decoded(TimeTrackerCore.TrackerContents.self, #"{"activities":[],"deletedActivities":[],"deletedProjects":[],"lastActivityID":0,"lastProjectID":0,"projects":[],"redo":[],"undo":[]}"#),
        reducer: TrackerRules.reducer
    )
    // 1: LoggedAction(
    //     action: .addProject(name: "  Writing "),
    //     at: 1800000000.0
    //   )
    await store.send(try decoded(TimeTrackerCore.LoggedAction.self, #"{"action":{"addProject":{"name":"  Writing "}},"at":1800000000}"#)) {
        $0 = try decoded(TimeTrackerCore.TrackerContents.self, #"{"activities":[],"deletedActivities":[],"deletedProjects":[],"lastActivityID":0,"lastProjectID":1,"projects":[{"created":1800000000,"id":1,"name":"Writing","nameKey":"writing"}],"redo":[],"undo":[{"change":{"projectInserted":{"_0":{"created":1800000000,"id":1,"name":"Writing"},"activities":[]}},"name":"Add Writing"}]}"#)
    }
    // 2: LoggedAction(
    //     action: .startActivity(projectID: 1),
    //     at: 1800000000.0
    //   )
    await store.send(try decoded(TimeTrackerCore.LoggedAction.self, #"{"action":{"startActivity":{"projectID":1}},"at":1800000000}"#)) {
        $0 = try decoded(TimeTrackerCore.TrackerContents.self, #"{"activities":[{"id":1,"projectID":1,"startedAt":1800000000}],"deletedActivities":[],"deletedProjects":[],"lastActivityID":1,"lastProjectID":1,"projects":[{"created":1800000000,"id":1,"name":"Writing","nameKey":"writing"}],"redo":[],"undo":[{"change":{"projectInserted":{"_0":{"created":1800000000,"id":1,"name":"Writing"},"activities":[]}},"name":"Add Writing"},{"change":{"activityInserted":{"_0":{"id":1,"projectID":1,"startedAt":1800000000}}},"name":"Start Writing"}]}"#)
    }
    // 3: LoggedAction(
    //     action: .stopActivity(projectID: 1),
    //     at: 1800001500.0
    //   )
    await store.send(try decoded(TimeTrackerCore.LoggedAction.self, #"{"action":{"stopActivity":{"projectID":1}},"at":1800001500}"#)) {
        $0 = try decoded(TimeTrackerCore.TrackerContents.self, #"{"activities":[{"id":1,"projectID":1,"startedAt":1800000000,"stoppedAt":1800001500}],"deletedActivities":[],"deletedProjects":[],"lastActivityID":1,"lastProjectID":1,"projects":[{"created":1800000000,"id":1,"name":"Writing","nameKey":"writing"}],"redo":[],"undo":[{"change":{"projectInserted":{"_0":{"created":1800000000,"id":1,"name":"Writing"},"activities":[]}},"name":"Add Writing"},{"change":{"activityInserted":{"_0":{"id":1,"projectID":1,"startedAt":1800000000}}},"name":"Start Writing"},{"change":{"activityStopped":{"at":1800001500,"id":1}},"name":"Stop Writing"}]}"#)
    }
    // 4: LoggedAction(
    //     action: .startActivity(projectID: 1),
    //     at: 1800000900.0
    //   )
    await store.send(try decoded(TimeTrackerCore.LoggedAction.self, #"{"action":{"startActivity":{"projectID":1}},"at":1800000900}"#)) {
        $0 = try decoded(TimeTrackerCore.TrackerContents.self, #"{"activities":[{"id":1,"projectID":1,"startedAt":1800000000,"stoppedAt":1800001500},{"id":2,"projectID":1,"startedAt":1800001500}],"deletedActivities":[],"deletedProjects":[],"lastActivityID":2,"lastProjectID":1,"projects":[{"created":1800000000,"id":1,"name":"Writing","nameKey":"writing"}],"redo":[],"undo":[{"change":{"projectInserted":{"_0":{"created":1800000000,"id":1,"name":"Writing"},"activities":[]}},"name":"Add Writing"},{"change":{"activityInserted":{"_0":{"id":1,"projectID":1,"startedAt":1800000000}}},"name":"Start Writing"},{"change":{"activityStopped":{"at":1800001500,"id":1}},"name":"Stop Writing"},{"change":{"activityInserted":{"_0":{"id":2,"projectID":1,"startedAt":1800001500}}},"name":"Start Writing"}]}"#)
    }
    // 5: LoggedAction(
    //     action: .renameProject(
    //       id: 1,
    //       name: "Essays"
    //     ),
    //     at: 1800000900.0
    //   )
    await store.send(try decoded(TimeTrackerCore.LoggedAction.self, #"{"action":{"renameProject":{"id":1,"name":"Essays"}},"at":1800000900}"#)) {
        $0 = try decoded(TimeTrackerCore.TrackerContents.self, #"{"activities":[{"id":1,"projectID":1,"startedAt":1800000000,"stoppedAt":1800001500},{"id":2,"projectID":1,"startedAt":1800001500}],"deletedActivities":[],"deletedProjects":[],"lastActivityID":2,"lastProjectID":1,"projects":[{"created":1800000000,"id":1,"name":"Essays","nameKey":"essays"}],"redo":[],"undo":[{"change":{"projectInserted":{"_0":{"created":1800000000,"id":1,"name":"Writing"},"activities":[]}},"name":"Add Writing"},{"change":{"activityInserted":{"_0":{"id":1,"projectID":1,"startedAt":1800000000}}},"name":"Start Writing"},{"change":{"activityStopped":{"at":1800001500,"id":1}},"name":"Stop Writing"},{"change":{"activityInserted":{"_0":{"id":2,"projectID":1,"startedAt":1800001500}}},"name":"Start Writing"},{"change":{"projectRenamed":{"from":"Writing","id":1,"keys":[{"from":"writing","id":1,"to":"essays"}],"to":"Essays"}},"name":"Rename Writing"}]}"#)
    }
    // 6: LoggedAction(
    //     action: .deleteProject(id: 1),
    //     at: 1800000900.0
    //   )
    await store.send(try decoded(TimeTrackerCore.LoggedAction.self, #"{"action":{"deleteProject":{"id":1}},"at":1800000900}"#)) {
        $0 = try decoded(TimeTrackerCore.TrackerContents.self, #"{"activities":[],"deletedActivities":[{"id":1,"projectID":1,"startedAt":1800000000,"stoppedAt":1800001500},{"id":2,"projectID":1,"startedAt":1800001500}],"deletedProjects":[{"created":1800000000,"deletedAt":1800000900,"id":1,"name":"Essays"}],"lastActivityID":2,"lastProjectID":1,"projects":[],"redo":[],"undo":[{"change":{"projectInserted":{"_0":{"created":1800000000,"id":1,"name":"Writing"},"activities":[]}},"name":"Add Writing"},{"change":{"activityInserted":{"_0":{"id":1,"projectID":1,"startedAt":1800000000}}},"name":"Start Writing"},{"change":{"activityStopped":{"at":1800001500,"id":1}},"name":"Stop Writing"},{"change":{"activityInserted":{"_0":{"id":2,"projectID":1,"startedAt":1800001500}}},"name":"Start Writing"},{"change":{"projectRenamed":{"from":"Writing","id":1,"keys":[{"from":"writing","id":1,"to":"essays"}],"to":"Essays"}},"name":"Rename Writing"},{"change":{"projectRemoved":{"_0":{"created":1800000000,"id":1,"name":"Essays"},"activities":[{"id":1,"projectID":1,"startedAt":1800000000,"stoppedAt":1800001500},{"id":2,"projectID":1,"startedAt":1800001500}]}},"name":"Delete Essays"}]}"#)
    }
    // 7: LoggedAction(
    //     action: .undo,
    //     at: 1800000900.0
    //   )
    await store.send(try decoded(TimeTrackerCore.LoggedAction.self, #"{"action":{"undo":{}},"at":1800000900}"#)) {
        $0 = try decoded(TimeTrackerCore.TrackerContents.self, #"{"activities":[{"id":1,"projectID":1,"startedAt":1800000000,"stoppedAt":1800001500},{"id":2,"projectID":1,"startedAt":1800001500}],"deletedActivities":[],"deletedProjects":[],"lastActivityID":2,"lastProjectID":1,"projects":[{"created":1800000000,"id":1,"name":"Essays","nameKey":"essays"}],"redo":[{"change":{"projectRemoved":{"_0":{"created":1800000000,"id":1,"name":"Essays"},"activities":[{"id":1,"projectID":1,"startedAt":1800000000,"stoppedAt":1800001500},{"id":2,"projectID":1,"startedAt":1800001500}]}},"name":"Delete Essays"}],"undo":[{"change":{"projectInserted":{"_0":{"created":1800000000,"id":1,"name":"Writing"},"activities":[]}},"name":"Add Writing"},{"change":{"activityInserted":{"_0":{"id":1,"projectID":1,"startedAt":1800000000}}},"name":"Start Writing"},{"change":{"activityStopped":{"at":1800001500,"id":1}},"name":"Stop Writing"},{"change":{"activityInserted":{"_0":{"id":2,"projectID":1,"startedAt":1800001500}}},"name":"Start Writing"},{"change":{"projectRenamed":{"from":"Writing","id":1,"keys":[{"from":"writing","id":1,"to":"essays"}],"to":"Essays"}},"name":"Rename Writing"}]}"#)
    }
    await store.finish()
}
