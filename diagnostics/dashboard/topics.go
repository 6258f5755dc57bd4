package dashboard

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
)

// A topic is one view of the Source: the JSON of GET /api/<name> and the
// events of that name of GET /api/events.
type topic struct {
	name string
	// every is how often a stream refreshes it, in base intervals: the
	// topics that cost the scheduler more are refreshed less often.
	every int
	// parse reads the topic's parameters.
	parse func(q url.Values) (query, error)
}

// query is a topic with its parameters read.
type query struct {
	// key names the topic and its parameters, written the same way
	// whatever the order or spelling of the request's: streams that ask
	// the same share one Source call per refresh.
	key string
	// fetch calls the Source; now is the time a window "last d" ends at.
	fetch func(src Source, now time.Time) (any, error)
}

// The limits of the parameters.
const (
	defaultTaskLimit = 2000
	maxTaskLimit     = 20_000

	defaultWindow = time.Minute
	maxWindow     = time.Hour
	defaultBars   = 3000
	maxBars       = 20_000

	defaultLogLimit = 500
	maxLogLimit     = 10_000

	// heavy is the period, in base intervals, of the topics that cost
	// the scheduler the most to make.
	heavy = 5
)

// topics are the topics, by name, in the order of the package
// documentation.
var topics = []*topic{
	{name: "status", every: 1, parse: plain(func(s Source) any { return s.Snapshot() })},
	{name: "task-window", every: 1, parse: parseTaskWindow},
	{name: "workers", every: 1, parse: plain(func(s Source) any { return s.Workers() })},
	{name: "worker", every: 1, parse: parseWorker},
	{name: "system", every: 1, parse: plain(func(s Source) any { return s.System() })},
	{name: "groups", every: heavy, parse: plain(func(s Source) any { return s.Groups() })},
	{name: "logs", every: 1, parse: parseLogs},
	{name: "errors", every: 1, parse: plain(func(s Source) any { return s.Errors() })},
	{name: "profile", every: heavy, parse: parseProfile},
	{name: "fine-metrics", every: heavy, parse: plain(func(s Source) any { return s.FineMetrics() })},
	{name: "bandwidth", every: heavy, parse: plain(func(s Source) any { return s.Bandwidth() })},
	{name: "shuffles", every: 1, parse: plain(func(s Source) any { return s.Shuffles() })},
	{name: "alerts", every: 1, parse: plain(alertsOf)},
}

// alertsOf returns the alerts of a Source, none when it raises none.
func alertsOf(s Source) any {
	if as, ok := s.(AlertSource); ok {
		return as.Alerts()
	}
	return &Alerts{Active: []diagnostics.Alert{}, Recent: []diagnostics.Alert{}}
}

func topicNamed(name string) *topic {
	for _, t := range topics {
		if t.name == name {
			return t
		}
	}
	return nil
}

func topicNames() string {
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.name
	}
	return strings.Join(names, ", ")
}

// paramError is a request parameter the dashboard cannot take: a 400.
type paramError struct {
	name, value, want string
}

func (e *paramError) Error() string {
	return fmt.Sprintf("%s=%q: want %s", e.name, e.value, e.want)
}

// notFoundError is a thing the Source does not know: a 404.
type notFoundError struct{ what string }

func (e *notFoundError) Error() string { return e.what }

func isParamError(err error) bool {
	var pe *paramError
	return errors.As(err, &pe)
}

// plain is the parse of a topic without parameters.
func plain(f func(Source) any) func(url.Values) (query, error) {
	return func(url.Values) (query, error) {
		return query{fetch: func(s Source, _ time.Time) (any, error) { return f(s), nil }}, nil
	}
}

// keyOf writes the parameters of a query in order.
func keyOf(v url.Values) string { return v.Encode() }

func parseTaskWindow(q url.Values) (query, error) {
	window := defaultWindow
	if s := q.Get("window"); s != "" {
		d, err := parseDuration(s)
		if err != nil || d <= 0 {
			return query{}, &paramError{"window", s, `a duration > 0, such as "5m" or a number of seconds (at most 1h)`}
		}
		window = min(d, maxWindow)
	}
	bars, err := intParam(q, "bars", defaultBars, maxBars)
	if err != nil {
		return query{}, err
	}
	return query{
		key: keyOf(url.Values{"window": {window.String()}, "bars": {strconv.Itoa(bars)}}),
		fetch: func(s Source, _ time.Time) (any, error) {
			return s.TaskWindow(window, bars), nil
		},
	}, nil
}

func parseWorker(q url.Values) (query, error) {
	name := q.Get("name")
	if name == "" {
		return query{}, &paramError{"name", name, "the address or the name of a worker"}
	}
	return query{
		key: keyOf(url.Values{"name": {name}}),
		fetch: func(s Source, _ time.Time) (any, error) {
			p := s.Worker(name)
			if p == nil {
				return nil, &notFoundError{fmt.Sprintf("no worker %q: the scheduler never knew it", name)}
			}
			return p, nil
		},
	}, nil
}

// levels are the log levels, and the other spellings taken for them.
var levels = map[string]string{"DEBUG": "DEBUG", "INFO": "INFO", "WARN": "WARN", "WARNING": "WARN", "ERROR": "ERROR"}

func parseLogs(q url.Values) (query, error) {
	var lq LogQuery
	if s := q.Get("level"); s != "" {
		l, ok := levels[strings.ToUpper(s)]
		if !ok {
			return query{}, &paramError{"level", s, "DEBUG, INFO, WARN or ERROR"}
		}
		lq.Level = l
	}
	lq.Source, lq.Key, lq.Text = q.Get("source"), q.Get("key"), q.Get("text")
	limit, err := intParam(q, "limit", defaultLogLimit, maxLogLimit)
	if err != nil {
		return query{}, err
	}
	lq.Limit = limit
	v := url.Values{"limit": {strconv.Itoa(limit)}}
	for k, s := range map[string]string{"level": lq.Level, "source": lq.Source, "key": lq.Key, "text": lq.Text} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return query{
		key:   keyOf(v),
		fetch: func(s Source, _ time.Time) (any, error) { return s.Logs(lq), nil },
	}, nil
}

// profileParams reads the window and filters of a profile; the window
// "last" ends at the now given to resolve.
type profileParams struct {
	last        time.Duration
	start, stop time.Time
	prefixes    []string
	workers     []string
}

func (p *profileParams) resolve(now time.Time) ProfileQuery {
	pq := ProfileQuery{Start: p.start, Stop: p.stop, Prefixes: p.prefixes, Workers: p.workers}
	if p.last > 0 {
		pq.Start = now.Add(-p.last)
	}
	return pq
}

func readProfileParams(q url.Values) (*profileParams, error) {
	p := &profileParams{}
	if s := q.Get("last"); s != "" {
		d, err := parseDuration(s)
		if err != nil || d <= 0 {
			return nil, &paramError{"last", s, `a duration > 0 back from now, such as "5m" or a number of seconds`}
		}
		p.last = d
	}
	for _, name := range []string{"start", "stop"} {
		s := q.Get(name)
		if s == "" {
			continue
		}
		if p.last > 0 {
			return nil, &paramError{name, s, "no start or stop with last: either a window back from now, or its times"}
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, &paramError{name, s, `a time in RFC 3339, such as "2025-01-02T15:04:05Z"`}
		}
		if name == "start" {
			p.start = t
		} else {
			p.stop = t
		}
	}
	if !p.start.IsZero() && !p.stop.IsZero() && p.stop.Before(p.start) {
		return nil, &paramError{"stop", q.Get("stop"), "a time after start " + q.Get("start")}
	}
	p.prefixes = listParam(q, "prefix")
	p.workers = listParam(q, "worker")
	return p, nil
}

func parseProfile(q url.Values) (query, error) {
	p, err := readProfileParams(q)
	if err != nil {
		return query{}, err
	}
	v := url.Values{"prefix": p.prefixes, "worker": p.workers}
	if p.last > 0 {
		v.Set("last", p.last.String())
	}
	if !p.start.IsZero() {
		v.Set("start", p.start.UTC().Format(time.RFC3339Nano))
	}
	if !p.stop.IsZero() {
		v.Set("stop", p.stop.UTC().Format(time.RFC3339Nano))
	}
	return query{
		key: keyOf(v),
		fetch: func(s Source, now time.Time) (any, error) {
			return s.Profile(p.resolve(now))
		},
	}, nil
}

// listParam returns the values of a repeated parameter, sorted, without
// repeats or empty ones.
func listParam(q url.Values, name string) []string {
	var out []string
	for _, s := range q[name] {
		if s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// intParam reads a parameter that is a count > 0, at most max.
func intParam(q url.Values, name string, def, max int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, &paramError{name, s, fmt.Sprintf("a number > 0 (at most %d)", max)}
	}
	return min(n, max), nil
}

// parseDuration reads a Go duration ("90s", "5m") or a number of seconds.
func parseDuration(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.Abs(f) > 1e9 {
			return 0, errors.New("not a number of seconds")
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}
