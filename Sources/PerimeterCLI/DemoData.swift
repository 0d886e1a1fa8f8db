/// The built-in demo's data: seven named areas of an imaginary town and a delivery van's route through them.
///
/// Written for Perimeter (no third-party data). The areas show every kind of fence — polygons, a polygon
/// with a hole, a circle, a corridor along a river, a buffered polygon, a multipolygon — and both Mapbox's
/// and Perimeter's property keys. `perimeter demo --export DIR` writes these two files.
enum DemoData {
    /// The fences, a GeoJSON FeatureCollection.
    static let fences = #"""
{
 "type": "FeatureCollection",
 "features": [
  {
   "type": "Feature",
   "id": "depot",
   "properties": {
    "name": "Depot",
    "perimeter:dwell": 120,
    "perimeter:group": "base",
    "perimeter:message": "{device} at the {name}"
   },
   "geometry": {
    "type": "Polygon",
    "coordinates": [
     [
      [
       7.445426,
       46.946648
      ],
      [
       7.449374,
       46.946648
      ],
      [
       7.449374,
       46.949352
      ],
      [
       7.445426,
       46.949352
      ],
      [
       7.445426,
       46.946648
      ]
     ]
    ]
   }
  },
  {
   "type": "Feature",
   "id": "old-town",
   "properties": {
    "name": "Old Town",
    "perimeter:dwell": 45,
    "perimeter:group": "districts"
   },
   "geometry": {
    "type": "Polygon",
    "coordinates": [
     [
      [
       7.44411,
       46.956112
      ],
      [
       7.461875,
       46.956112
      ],
      [
       7.461875,
       46.96152
      ],
      [
       7.44411,
       46.96152
      ],
      [
       7.44411,
       46.956112
      ]
     ],
     [
      [
       7.452664,
       46.957914
      ],
      [
       7.452664,
       46.959717
      ],
      [
       7.456611,
       46.959717
      ],
      [
       7.456611,
       46.957914
      ],
      [
       7.452664,
       46.957914
      ]
     ]
    ]
   }
  },
  {
   "type": "Feature",
   "id": "cathedral-close",
   "properties": {
    "name": "Cathedral Close",
    "perimeter:group": "districts"
   },
   "geometry": {
    "type": "Polygon",
    "coordinates": [
     [
      [
       7.452664,
       46.957914
      ],
      [
       7.456611,
       46.957914
      ],
      [
       7.456611,
       46.959717
      ],
      [
       7.452664,
       46.959717
      ],
      [
       7.452664,
       46.957914
      ]
     ]
    ]
   }
  },
  {
   "type": "Feature",
   "id": "market-square",
   "properties": {
    "name": "Market Square",
    "MBX_GEOFENCE_POINT_RADIUS": 120,
    "perimeter:events": [
     "entry",
     "exit"
    ]
   },
   "geometry": {
    "type": "Point",
    "coordinates": [
     7.467138,
     46.964674
    ]
   }
  },
  {
   "type": "Feature",
   "id": "river-walk",
   "properties": {
    "name": "River Walk",
    "MBX_GEOFENCE_DWELL_TIME": 1,
    "perimeter:radius": 80
   },
   "geometry": {
    "type": "LineString",
    "coordinates": [
     [
      7.462533,
      46.970082
     ],
     [
      7.471086,
      46.971073
     ],
     [
      7.478981,
      46.970262
     ],
     [
      7.491482,
      46.970893
     ]
    ]
   }
  },
  {
   "type": "Feature",
   "id": "hospital",
   "properties": {
    "name": "Hospital",
    "perimeter:buffer": 120,
    "perimeter:events": "entry, exit",
    "perimeter:message": "{name} zone: mind pedestrians"
   },
   "geometry": {
    "type": "Polygon",
    "coordinates": [
     [
      [
       7.488193,
       46.96197
      ],
      [
       7.489509,
       46.96197
      ],
      [
       7.489509,
       46.963322
      ],
      [
       7.488193,
       46.963322
      ],
      [
       7.488193,
       46.96197
      ]
     ]
    ]
   }
  },
  {
   "type": "Feature",
   "id": "industrial-park",
   "properties": {
    "name": "Industrial Park",
    "perimeter:group": "districts"
   },
   "geometry": {
    "type": "MultiPolygon",
    "coordinates": [
     [
      [
       [
        7.480297,
        46.950704
       ],
       [
        7.485561,
        46.950704
       ],
       [
        7.485561,
        46.954309
       ],
       [
        7.480297,
        46.954309
       ],
       [
        7.480297,
        46.950704
       ]
      ]
     ],
     [
      [
       [
        7.472402,
        46.945296
       ],
       [
        7.477666,
        46.945296
       ],
       [
        7.477666,
        46.949803
       ],
       [
        7.472402,
        46.949803
       ],
       [
        7.472402,
        46.945296
       ]
      ]
     ]
    ]
   }
  }
 ]
}
"""#

    /// The van's route, a GeoJSON LineString without times (the demo drives it at a set speed).
    static let route = #"""
{
 "type": "Feature",
 "id": "van-7",
 "properties": {
  "name": "Delivery van 7"
 },
 "geometry": {
  "type": "LineString",
  "coordinates": [
   [
    7.4474,
    46.948
   ],
   [
    7.4474,
    46.958816
   ],
   [
    7.467138,
    46.958816
   ],
   [
    7.467138,
    46.970533
   ],
   [
    7.486877,
    46.970533
   ],
   [
    7.486877,
    46.95521
   ],
   [
    7.47635,
    46.948
   ],
   [
    7.4474,
    46.948
   ]
  ]
 }
}
"""#

    /// The demo's device.
    static let device = "van-7"
    /// Driving speed in metres per second (43 km/h).
    static let speed = 12.0
    /// When the drive starts.
    static let start = "2026-06-01T08:00:00Z"
    /// How long the van stays parked at the depot after the drive, in seconds.
    static let parked = 600.0
}
