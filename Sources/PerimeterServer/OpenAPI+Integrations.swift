import PerimeterGeoJSON

/// The schemas of simulated drives (`/v1/simulations`) and webhooks (`/v1/webhooks`, admin scope),
/// used by their endpoints' entries in ``PerimeterAPI``'s table.
extension OpenAPI {
    static let simulationRequest: JSONValue = [
        "type": "object", "required": ["deviceId", "path", "speed"], "properties": [
            "deviceId": ["type": "string", "minLength": 1, "maxLength": 256],
            "path": ["type": "object", "description": "A GeoJSON LineString geometry, or a Feature holding one"],
            "speed": ["type": "number", "exclusiveMinimum": 0, "maximum": 1_000_000, "description": "metres per second"],
            "interval": ["type": "number", "exclusiveMinimum": 0, "maximum": 3600, "description": "simulated seconds between updates"],
            "timeScale": ["type": "number", "exclusiveMinimum": 0, "maximum": 10_000],
        ],
    ]

    static let simulation: JSONValue = [
        "type": "object",
        "required": ["id", "deviceId", "status", "speed", "interval", "timeScale", "updates", "sent", "rejected", "events", "startedAt"],
        "properties": [
            "id": ["type": "string"], "deviceId": ["type": "string"],
            "status": ["enum": ["running", "finished", "stopped", "failed"]],
            "speed": ["type": "number"], "interval": ["type": "number"], "timeScale": ["type": "number"],
            "updates": ["type": "integer"], "sent": ["type": "integer"], "rejected": ["type": "integer"],
            "events": ["type": "integer"], "startedAt": ["type": "string", "format": "date-time"],
            "endedAt": ["type": "string", "format": "date-time"],
            "position": ["type": "object", "properties": [
                "latitude": ["type": "number"], "longitude": ["type": "number"], "time": ["type": "string", "format": "date-time"]]],
            "error": ["type": "string"],
        ],
    ]

    static let webhookFilter: JSONValue = [
        "type": "object", "properties": [
            "devices": ["type": "array", "items": ["type": "string"]], "fences": ["type": "array", "items": ["type": "string"]],
            "groups": ["type": "array", "items": ["type": "string"]],
            "types": ["type": "array", "items": ["enum": ["entry", "dwell", "exit", "cross", "inside"]]],
        ],
    ]

    static let webhookRegistration: JSONValue = [
        "type": "object", "required": ["url"], "additionalProperties": false, "properties": [
            "url": ["type": "string", "description": "an http:// or https:// URL (https verified against the trusted CAs); private and loopback targets are refused unless allowed"],
            "filter": webhookFilter,
            "secret": ["type": "string", "minLength": 16, "maxLength": 4096],
            "id": ["type": "string", "pattern": "^[A-Za-z0-9_-]{1,128}$"],
        ],
    ]

    static let webhookCreated: JSONValue = [
        "type": "object", "required": ["id", "url", "filter", "createdAt", "secret"], "properties": [
            "id": ["type": "string"], "url": ["type": "string"], "filter": ["type": "object"],
            "createdAt": ["type": "string", "format": "date-time"], "secret": ["type": "string"],
        ],
    ]

    static let webhookStatus: JSONValue = [
        "type": "object", "required": ["id", "url", "filter", "createdAt", "cursor", "counters", "inFlight"], "properties": [
            "id": ["type": "string"], "url": ["type": "string"], "filter": ["type": "object"],
            "createdAt": ["type": "string", "format": "date-time"], "cursor": ["type": "integer"],
            "counters": ["type": "object", "properties": [
                "delivered": ["type": "integer"], "failedAttempts": ["type": "integer"], "deadLettered": ["type": "integer"],
                "deadLetters": ["type": "integer"], "pending": ["type": "integer"], "inFlight": ["type": "boolean"],
                "lastError": ["type": ["string", "null"]], "lastErrorAt": ["type": ["string", "null"]],
                "lastSuccessAt": ["type": ["string", "null"]],
            ]],
            "inFlight": ["type": ["object", "null"]],
        ],
    ]

    static let deadLetter: JSONValue = [
        "type": "object", "required": ["sequence", "eventId", "attempts", "firstAttemptAt", "failedAt", "lastError", "redriveRequested"],
        "properties": [
            "sequence": ["type": "integer"], "eventId": ["type": "string"], "attempts": ["type": "integer"],
            "firstAttemptAt": ["type": "string", "format": "date-time"], "failedAt": ["type": "string", "format": "date-time"],
            "lastError": ["type": "string"], "redriveRequested": ["type": "boolean"],
        ],
    ]
}
