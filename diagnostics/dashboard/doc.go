// Package dashboard is the live web dashboard of a Shoal scheduler, in the
// manner of Dask's: which workers there are and what they use, how far
// each computation and kind of task has got, which tasks ran where and
// when, where their time went, what failed and why, and what the
// scheduler and the workers logged. The scheduler serves it when asked to
// (server.Config.DashboardListen; a LocalCluster does by default) and
// Client.Info reports where.
//
// The pages are plain HTML, CSS and JavaScript built into the program:
// they load nothing from elsewhere and need no build step. The server
// pushes what they show with Server-Sent Events: each page opens one
// stream for all it shows, and the stream sends a part again only when it
// changed.
//
// # Pages
//
// Every page has the same navigation bar and URLs relative to its own, so
// the dashboard can be served under a path by a proxy, and the same
// banner of the alerts raised (when the Source is an AlertSource), such
// as a worker's disk nearly full, a straggler task or a skewed shuffle.
// A page keeps its choices (window, filters) in its query string.
//
//	/, /status     the summary, the erred tasks, the task stream of the last
//	               1, 5 or 15 minutes (a bar per run, or when there are too
//	               many, how busy each worker was with each prefix), the
//	               progress of the computations and prefixes, the memory of
//	               the workers and the scheduler's log
//	/workers       each worker's CPU, memory, network, directories, files
//	               and tasks, with sparklines; gone workers with why
//	/worker        one worker (parameter name): its numbers over time, its
//	               log, its last runs and its CPU profile
//	/system        the scheduler's own process over time
//	/groups        the task groups as a graph of progress bars
//	/logs          the logs of the scheduler and the workers, filtered
//	/errors        the erred tasks with their stacks, the failed computations
//	/profile       the cluster's CPU profile as a flame graph, which prefixes
//	               ran when, and the profile for go tool pprof
//	/fine-metrics  where the time of each task prefix went, by activity
//	/bandwidth     the bytes moved from worker to worker, and by prefix
//	/shuffles      the shuffles: their progress and their bytes and disk
//	               on each worker
//
// # Endpoints
//
// All are GET, answer JSON with Cache-Control: no-store unless said, and
// answer a bad parameter with 400 and a text that names it and says what
// is wanted. Each JSON endpoint but /api/tasks is also a topic of
// /api/events, of the same name.
//
//	/api/status        the cluster now: a Status
//	/api/tasks         task runs after since (the next of the previous
//	                   answer; default 0: every run kept), at most limit
//	                   (default 2000, at most 20000): a TaskStream
//	/api/task-window   the task stream of the last window (a Go duration
//	                   such as 5m, or seconds; default 1m, at most 1h), in
//	                   at most bars bars (default 3000, at most 20000): a
//	                   TaskWindow
//	/api/workers       Workers
//	/api/worker        the worker of address or name name: a WorkerPage;
//	                   404 naming it when the scheduler never knew it
//	/api/system        System
//	/api/groups        Groups
//	/api/logs          the records of least level level (DEBUG, INFO, WARN,
//	                   ERROR), of source source (scheduler, or a worker),
//	                   about task key key, with text text, the newest limit
//	                   of them (default 500, at most 10000): Logs
//	/api/errors        Errors
//	/api/profile       the profile of the window last (a duration back from
//	                   now) or start and stop (RFC 3339; none: every sample
//	                   kept), of the prefixes prefix and workers worker
//	                   (repeated; none: all): a Profile. An error of the
//	                   Source is a 500 with its text.
//	/api/profile.pb.gz the same profile, gzipped pprof (application/
//	                   octet-stream, as the attachment shoal-profile.pb.gz)
//	/api/fine-metrics  FineMetrics
//	/api/bandwidth     Bandwidth
//	/api/shuffles      Shuffles
//	/api/alerts        Alerts
//	/api/events        a stream of the topics named by topics (comma
//	                   separated), with their parameters as above
//	/health            "ok"
//
// Times are RFC 3339, memory and disk in bytes, rates in bytes per second;
// the comments of the types say what each field means.
//
// # Events
//
// GET /api/events?topics=status,task-window&window=5m answers
// text/event-stream: each topic at once, as
//
//	event: status
//	data: {"time": "…", "scheduler": {…}, …}
//
// with the JSON of its endpoint on one line, then again each time it
// changed, looked at every interval (WithInterval; a second by default)
// and for groups, profile, fine-metrics and bandwidth every five. When
// the Source fails for a topic (no such worker, no profiler) the event is
//
//	event: topic-error
//	data: {"topic": "profile", "error": "…"}
//
// A comment keeps a quiet stream alive every 15 seconds. A stream ends when
// its client goes or the context of WithContext ends.
//
// The cost of the dashboard on the scheduler is that of the topics
// watched, once per interval: the streams that watch a topic with the same
// parameters share one call of the Source and one encoding of its JSON, so
// ten viewers cost what one does; a topic nobody watches costs nothing;
// and a page hidden for a minute closes its stream.
//
// # Pages and their data
//
// Each page reads what it shows through one object of its script,
// Shoal.data (static/data.js): get(topic, params) and subscribe(topics,
// params, onData, onError). On the live dashboard it reads these
// endpoints; from a file, it reads a Snapshot of them.
//
// # The pages from a file
//
// A Snapshot is every topic of a Source taken at once (Capture). The same
// pages show one without its Source, with what it holds (see Snapshot):
// WriteReport writes a performance report, one HTML file of every page
// and the snapshot, which loads nothing and opens from disk (its first
// page sums up its period: ReportSummary); FileHandler serves the pages
// from a snapshot over HTTP. A Period records the events of an executor
// between two moments and takes the snapshot of that stretch alone:
// what a performance report shows.
//
// # Serving it
//
// Handler serves the dashboard of any Source. The scheduler server is one;
// Recorder turns the events of a diagnostics.Hub into the task stream and
// the progress of a Source.
package dashboard
