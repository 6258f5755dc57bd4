// Package dashboard is the live web dashboard of a Shoal scheduler, in the
// manner of Dask's status page: which workers there are and how much
// memory they use, how far each kind of task has got, which tasks ran
// where and when, and what the scheduler logged. The scheduler serves it
// when asked to (server.Config.DashboardListen; a LocalCluster does by
// default) and Client.Info reports where.
//
// The page is plain HTML, CSS and JavaScript built into the program: it
// loads nothing from elsewhere and needs no build step. It polls the JSON
// endpoints below once a second.
//
// # Endpoints
//
//	GET /, /status     the status page
//	GET /api/status    the cluster now: a Status as JSON
//	GET /api/tasks     the task stream: a TaskStream as JSON; parameters
//	                   since (the next of the previous answer; default 0:
//	                   every run kept) and limit (default 2000, at most
//	                   20000: the newest runs when there are more)
//	GET /health        "ok"
//
// # JSON
//
// /api/status returns
//
//	{"time": "2025-01-02T15:04:05.123Z",
//	 "scheduler": {"id": "scheduler-5f2a…", "address": "127.0.0.1:8786",
//	               "started": "…", "clients": 1, "metrics": "127.0.0.1:9100"},
//	 "workers": [{"address": "127.0.0.1:40123", "name": "", "state": "running",
//	              "threads": 4, "memory_limit": 4294967296,
//	              "managed": 1048576, "unmanaged": 52428800, "spilled": 0,
//	              "processing": 3, "in_memory": 12, "last_seen": "…", "metrics": ""}],
//	 "tasks": {"waiting": 10, "processing": 6, "memory": 24},
//	 "progress": [{"prefix": "read-csv", "total": 40, "done": 24, "memory": 20,
//	               "erred": 0, "processing": 6}],
//	 "logs": [{"time": "…", "level": "INFO", "message": "worker joined",
//	           "attrs": {"worker": "127.0.0.1:40123"}}],
//	 "stream_next": 24}
//
// and /api/tasks?since=20
//
//	{"tasks": [{"seq": 21, "worker": "127.0.0.1:40123", "key": "read-csv-3",
//	            "prefix": "read-csv", "start": "…", "stop": "…", "state": "memory"}],
//	 "next": 24, "missed": 0}
//
// Times are RFC 3339; memory is in bytes. The fields are those of the
// types Status and TaskStream, whose comments say what each means.
//
// # Serving it
//
// Handler serves the dashboard of any Source. The scheduler server is one;
// Recorder turns the events of a diagnostics.Hub into the task stream and
// the progress of a Source.
package dashboard
