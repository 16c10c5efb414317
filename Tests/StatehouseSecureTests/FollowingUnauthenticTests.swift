import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import Testing

/// A container following another process's saves, when what that process stored does not open here: mid-rotation,
/// the other process seals with a key this one was not given yet.
@Suite("Following sealed values that do not open", .serialized)
struct FollowingUnauthenticTests {
    @Test func aValueSealedWithANewKeyReachesAFollowerWithTheOldOneAsAnErrorSayingWhereItWasKept() async throws {
        let directory = TemporaryDirectory()
        let old = EncryptionKey.random(), new = EncryptionKey.random()
        let key = "secure.follow.rotated"
        let follower = StateContainer(
            "default", key: key, storage: EncryptedStorage(directory: directory.url, key: old),
            externalChanges: .poll(every: .milliseconds(5))
        )
        let rotated = EncryptedStorage(directory: directory.url, key: new, previousKeys: [old])
        try rotated.save(try JSONEncoder().encode("sealed with the new key"), key: key)
        let sealed = try Data(contentsOf: directory.file(of: key))
        #expect(await eventually { follower.storageError?.value != nil })
        let error = try #require(follower.storageError?.value)
        #expect(error.kind == .authenticationFailed)
        #expect(follower.value == "default")
        let aside = try #require(error.keptAside, "the error does not say where the bytes were kept: \(error)")
        #expect(error.message.contains(aside))
        // The follower's next write replaces the key's file; the new key's value is where the error said.
        follower.modify("written with the old key")
        try follower.flush()
        #expect(try FileStorage(directory: directory.url).load(key: aside) == sealed)
    }
}
