import Foundation
import PerimeterNATS
import PerimeterTestSupport
import Synchronization
import Testing

@Suite("Key-value buckets on a real nats-server", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct KeyValueTests {
    @Test func createGetCompareAndSetDelete() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let kv = try js.createKeyValue(KeyValueConfiguration(bucket: unique("kv"), history: 5))
            try check(try kv.get("lease") == nil, "a new key has no value")
            let created = try kv.create("lease", "worker-a".bytes)
            do {
                try kv.create("lease", "worker-b".bytes)
                throw Failed("create of an existing key succeeded")
            } catch let error as NATSError {
                try check(error.reason == .wrongLastSequence, "create-only refusal: \(error)")
            }
            let entry = try kv.get("lease")
            try check(entry?.text == "worker-a" && entry?.revision == created && entry?.operation == .put, "get: \(String(describing: entry))")
            let updated = try kv.update("lease", "worker-a renewed".bytes, expectedRevision: created)
            try check(updated > created, "revisions grow")
            do {
                try kv.update("lease", "worker-b takes over".bytes, expectedRevision: created)
                throw Failed("an update at a stale revision succeeded")
            } catch let error as NATSError {
                try check(error.reason == .wrongLastSequence, "stale compare-and-set: \(error)")
                try check(error.description.contains("update"), "\(error)")
            }
            try check(try kv.get("lease")?.text == "worker-a renewed", "the stale write changed nothing")
            try kv.delete("lease")
            try check(try kv.get("lease") == nil, "a deleted key has no value")
            // A deleted key can be created again (the lease is free).
            let again = try kv.create("lease", "worker-b".bytes)
            try check(again > updated, "re-created at a newer revision")
            try check(try kv.keys() == ["lease"], "keys")
            // An encoded id is a valid key (fences are kept under their encoded ids).
            let key = SubjectToken.encode("Café ~ *.>/=")
            try kv.put(key, "fence".bytes)
            try check(try kv.get(key)?.text == "fence", "an encoded id as a key")
            try check(SubjectToken.decode(try kv.keys().first { $0 != "lease" } ?? "") == "Café ~ *.>/=", "the key decodes")
            try js.deleteKeyValue(kv.name)
        }
    }

    @Test func compareAndSetRacesHaveExactlyOneWinnerPerRevision() async throws {
        let (total, winners) = try await offThePool { () -> (Int, Int) in
            let js = try SharedServer.jetStream()
            let kv = try js.createKeyValue(KeyValueConfiguration(bucket: unique("race")))
            try kv.create("counter", "0".bytes)
            let threads = 4, incrementsEach = 25
            let revisions = Mutex<[UInt64]>([])
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: threads) { t in
                do {
                    // Each thread: its own connection, read-modify-write with compare-and-set until it wins.
                    let js = try SharedServer.jetStream()
                    let mine = try js.keyValue(kv.name)
                    var done = 0
                    while done < incrementsEach {
                        guard let entry = try mine.get("counter") else { throw Failed("counter vanished") }
                        let value = Int(entry.text)! + 1
                        do {
                            let revision = try mine.update("counter", "\(value)".bytes, expectedRevision: entry.revision)
                            revisions.withLock { $0.append(revision) }
                            done += 1
                        } catch let error as NATSError where error.reason == .wrongLastSequence {
                            continue   // lost the race: read again
                        }
                    }
                } catch {
                    failures.withLock { $0.append("thread \(t): \(error)") }
                }
            }
            try check(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
            let won = revisions.withLock { $0 }
            try check(Set(won).count == won.count, "two writers won the same revision")
            let final = try kv.get("counter")
            try js.deleteKeyValue(kv.name)
            return (Int(final!.text)!, won.count)
        }
        #expect(total == 100, "every increment counted once")
        #expect(winners == 100)
    }

    @Test func watchDeliversInitialValuesThenWritesInRevisionOrder() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let kv = try js.createKeyValue(KeyValueConfiguration(bucket: unique("watch"), history: 10))
            try kv.put("fences.a", "a1".bytes)
            try kv.put("fences.b", "b1".bytes)
            try kv.put("fences.a", "a2".bytes)
            try kv.put("other", "x".bytes)
            let watcher = try kv.watch("fences.>")
            var initial: [KeyValueEntry] = []
            while true {
                guard let update = try watcher.next(timeout: .seconds(5)) else { throw Failed("no caught-up marker") }
                if case .entry(let entry) = update { initial.append(entry) } else { break }
            }
            try check(initial.map(\.text) == ["b1", "a2"], "latest revision per key, in revision order: \(initial.map(\.text))")
            // Writes from another connection arrive in revision order, deletes included.
            let writer = try SharedServer.jetStream().keyValue(kv.name)
            var written: [UInt64] = []
            for i in 0..<50 { written.append(try writer.put(i % 2 == 0 ? "fences.a" : "fences.c", "v\(i)".bytes)) }
            try writer.delete("fences.c")
            var seen: [KeyValueEntry] = []
            while seen.count < 51 {
                guard let update = try watcher.next(timeout: .seconds(5)) else { throw Failed("only \(seen.count) updates") }
                if case .entry(let entry) = update { seen.append(entry) }
            }
            try check(seen.prefix(50).map(\.revision) == written, "revision order")
            try check(seen.prefix(50).map(\.text) == (0..<50).map { "v\($0)" }, "values")
            try check(seen.last?.operation == .delete && seen.last?.key == "fences.c", "the delete marker")
            try check(zip(seen, seen.dropFirst()).allSatisfy { $0.revision < $1.revision }, "increasing revisions")
            watcher.stop()
            try js.deleteKeyValue(kv.name)
        }
    }

    @Test func bucketTimeToLiveIsADurationNotNanosecondsByAccident() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            // 1 s: were it passed as 1 (ns) or 1000 (ms as ns), entries would vanish at once.
            let kv = try js.createKeyValue(KeyValueConfiguration(bucket: unique("ttl"), ttl: .seconds(1)))
            try kv.put("k", "v".bytes)
            try check(try kv.get("k")?.text == "v", "present at once")
            let expired = waitUntil(seconds: 10) { (try? kv.get("k")) == nil }
            try check(expired, "gone after the TTL")
            try js.deleteKeyValue(kv.name)
        }
    }
}
