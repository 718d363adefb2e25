// SPDX-License-Identifier: GPL-2.0
// latsnap's HTML pages (show --html, report --html): inlined into each page by review/html.c.
//
// The page's data is the JSON of the script element "latsnap-data". Text from the snapshot (comms,
// symbols, causes, a request's query text) is hostile: it only ever goes into the page as
// textContent or an attribute value, never as markup. When the page has been drawn,
// <body data-render="ok">; a script error sets data-render="error" and is shown on the page.
'use strict';

(function () {
	var errors = [];

	function fail(message) {
		errors.push(String(message));
		document.body.setAttribute('data-render', 'error');
		document.body.setAttribute('data-errors', errors.join(' | '));
		var box = document.getElementById('latsnap-errors');
		if (box) {
			box.hidden = false;
			box.textContent = 'This page could not be drawn completely: ' + errors.join('; ');
		}
	}

	window.addEventListener('error', function (ev) {
		fail(ev.message || 'script error');
	});

	var SVGNS = 'http://www.w3.org/2000/svg';

	// el('td', {class: 'num'}, 'text', child, ...): an element; strings become text nodes.
	function el(tag, attrs) {
		var node = document.createElement(tag);
		setAttrs(node, attrs);
		for (var i = 2; i < arguments.length; i++) {
			append(node, arguments[i]);
		}
		return node;
	}

	function svg(tag, attrs) {
		var node = document.createElementNS(SVGNS, tag);
		setAttrs(node, attrs);
		for (var i = 2; i < arguments.length; i++) {
			append(node, arguments[i]);
		}
		return node;
	}

	function setAttrs(node, attrs) {
		if (!attrs) {
			return;
		}
		Object.keys(attrs).forEach(function (k) {
			if (attrs[k] !== null && attrs[k] !== undefined) {
				node.setAttribute(k, String(attrs[k]));
			}
		});
	}

	function append(node, child) {
		if (child === null || child === undefined) {
			return;
		}
		if (Array.isArray(child)) {
			child.forEach(function (c) {
				append(node, c);
			});
		} else if (typeof child === 'object') {
			node.appendChild(child);
		} else {
			node.appendChild(document.createTextNode(String(child)));
		}
	}

	function fmtNs(ns) {
		ns = Number(ns) || 0;
		var a = Math.abs(ns);
		if (a < 1e3) {
			return ns.toFixed(0) + ' ns';
		}
		if (a < 1e6) {
			return (ns / 1e3).toFixed(3) + ' \u00b5s';
		}
		if (a < 1e9) {
			return (ns / 1e6).toFixed(3) + ' ms';
		}
		return (ns / 1e9).toFixed(3) + ' s';
	}

	function pct(part, whole) {
		return whole > 0 ? (100 * part / whole).toFixed(1) + '%' : '-';
	}

	function frameName(f) {
		if (!f) {
			return '?';
		}
		// A Python frame (CPython 3.11): its function's qualified name; addr is its code object.
		if (f.symbolized === 'python') {
			return f.symbol ? f.symbol : '? (Python code ' + f.addr + ')';
		}
		var name = f.symbol ? f.symbol : f.addr;
		if (f.symbol && f.offset !== undefined && f.offset !== null) {
			name += '+0x' + Number(f.offset).toString(16);
		}
		return name;
	}

	function frameWhere(f) {
		var parts = [];
		if (f.file) {
			parts.push(f.file + (f.line ? ':' + f.line : ''));
		}
		if (f.module && f.module !== 'kernel' && f.symbolized !== 'python') {
			parts.push('(' + f.module.replace(/^.*\//, '') + ')');
		}
		return parts.join('  ');
	}

	// The kernel stack it waited in longest: the one that proves where the time went.
	function heaviestKernelStack(o) {
		var best = null;
		(o.kernel_stacks || []).forEach(function (s) {
			if (!best || (s.weight_ns || 0) > (best.weight_ns || 0)) {
				best = s;
			}
		});
		return best;
	}

	function innermostKernel(o) {
		var s = heaviestKernelStack(o);
		return s && s.frames && s.frames.length ? s.frames[0] : null;
	}

	function what(o) {
		if (o.kind === 'request') {
			return 'request' + (o.request && o.request.probe ? ' ' + o.request.probe : '');
		}
		return o.syscall ? o.syscall : o.kind;
	}

	function thread(o) {
		return (o.comm || '?') + ' (' + o.pid + '/' + o.tid + ')';
	}

	function splitBar(o, mini) {
		var d = o.duration_ns || 0;
		var bar = el('div', { class: mini ? 'split mini' : 'split' });
		[['on-cpu', o.on_cpu_ns], ['runqueue', o.runqueue_ns], ['blocked', o.blocked_ns]].forEach(
			function (p) {
				if (d > 0 && p[1] > 0) {
					bar.appendChild(el('div', {
						style: 'width:' + (100 * p[1] / d).toFixed(3) + '%;background:var(--' + p[0] + ')',
						title: p[0] + ' ' + fmtNs(p[1])
					}));
				}
			});
		return bar;
	}

	function legend() {
		return el('div', { class: 'legend sub' },
			el('span', null, el('i', { class: 'sw on-cpu' }), 'on CPU'),
			el('span', null, el('i', { class: 'sw runqueue' }), 'runqueue (waiting for a CPU)'),
			el('span', null, el('i', { class: 'sw blocked' }), 'blocked'),
			el('span', null, el('i', { class: 'sw unknown' }), 'not known'),
			el('span', null, '\u2193 wakeup (waker to woken)'));
	}

	// User frames (outermost first) over kernel frames (innermost last): read top-down as calls.
	function stackList(userFrames, kernelFrames) {
		var ul = el('ul', { class: 'frames' });
		var u = (userFrames || []).slice().reverse();
		var k = (kernelFrames || []).slice().reverse();
		u.forEach(function (f) {
			ul.appendChild(el('li', { class: 'user', title: f.addr || '' }, frameName(f) +
				(frameWhere(f) ? '  ' + frameWhere(f) : '')));
		});
		if (u.length && k.length) {
			ul.appendChild(el('li', { class: 'sep' }, '\u2500\u2500 kernel \u2500\u2500'));
		}
		k.forEach(function (f, i) {
			ul.appendChild(el('li', {
				class: 'kernel' + (i === k.length - 1 ? ' innermost' : ''),
				title: f.addr || ''
			}, frameName(f)));
		});
		if (!u.length && !k.length) {
			ul.appendChild(el('li', { class: 'sub' }, 'no stack'));
		}
		return ul;
	}

	// One axis per thread: its states as coloured spans, its syscalls as a dark strip on top,
	// wakeups as arrows from the waker's axis to the woken one's (from the top when an
	// interrupt, or a thread not on the page, woke it).
	function timeline(o) {
		var lanes = o.lanes || [];
		var win = o.window || [0, o.duration_ns || 0];
		if (!lanes.length) {
			return el('p', { class: 'sub' },
				'No timeline: the snapshot has no scheduler events for this outlier ' +
				'(recorded with --context none, or the trace could not be read).');
		}
		var W = 1000, LABEL = 190, LANE = 26, TOP = 26, AXIS = 22;
		var H = TOP + lanes.length * LANE + AXIS;
		var from = win[0], to = win[1];
		if (to <= from) {
			to = from + 1;
		}
		function x(rel) {
			var v = LABEL + (W - LABEL - 10) * (rel - from) / (to - from);
			return Math.max(LABEL, Math.min(W - 10, v));
		}
		var laneY = {};
		var root = svg('svg', {
			class: 'timeline', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H,
			role: 'img'
		});
		var defs = svg('defs', null, svg('marker', {
			id: 'arrow-' + o._index, viewBox: '0 0 10 10', refX: 9, refY: 5,
			markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse'
		}, svg('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#111827' })));
		root.appendChild(defs);
		root.appendChild(svg('rect', {
			class: 'window', x: x(0), y: 4, width: Math.max(1, x(o.duration_ns) - x(0)),
			height: H - AXIS - 4
		}, svg('title', null, 'the outlier: ' + fmtNs(o.duration_ns))));
		root.appendChild(svg('text', { x: x(0) + 3, y: 16 }, 'outlier ' + fmtNs(o.duration_ns)));
		lanes.forEach(function (lane, i) {
			var y = TOP + i * LANE;
			laneY[lane.tid] = y;
			var g = svg('g', { class: 'lane', 'data-tid': lane.tid, 'data-role': lane.role });
			g.appendChild(svg('text', { class: 'lane-label', x: 4, y: y + 11 },
				(lane.comm || '?') + ' ' + lane.tid));
			g.appendChild(svg('text', { x: 4, y: y + 22, class: 'sub' }, lane.role));
			(lane.spans || []).forEach(function (s) {
				var x0 = x(s[0]), x1 = x(s[1]);
				g.appendChild(svg('rect', {
					class: s[2], x: x0, y: y + 6, width: Math.max(0.5, x1 - x0), height: 14
				}, svg('title', null, s[2] + ' ' + fmtNs(s[1] - s[0]) + ' at ' + fmtNs(s[0]))));
			});
			(lane.syscalls || []).forEach(function (s) {
				var x0 = x(s[0]), x1 = x(s[1]);
				g.appendChild(svg('rect', {
					class: 'syscall', x: x0, y: y + 2, width: Math.max(1, x1 - x0), height: 3
				}, svg('title', null, s[2] + ' ' + fmtNs(s[1] - s[0]))));
			});
			root.appendChild(g);
		});
		(o.wakeups || []).forEach(function (w) {
			var to_y = laneY[w.tid];
			if (to_y === undefined) {
				return;
			}
			var from_y = laneY[w.waker_tid];
			var wx = x(w.rel_ns);
			var y0 = from_y === undefined ? 2 : from_y + 13;
			var y1 = from_y !== undefined && from_y > to_y ? to_y + 20 : to_y + 6;
			if (from_y === to_y) {
				return;
			}
			root.appendChild(svg('line', {
				class: 'wakeup', x1: wx, y1: y0, x2: wx, y2: y1,
				'marker-end': 'url(#arrow-' + o._index + ')'
			}, svg('title', null, 'woken by ' + (w.waker_comm || '?') + ' ' + w.waker_tid +
				(w.in_irq ? ' (in an interrupt)' : '') + ' at ' + fmtNs(w.rel_ns))));
		});
		var axis = svg('g', { class: 'axis' });
		var span = to - from, step = Math.pow(10, Math.floor(Math.log10(span / 6)));
		[1, 2, 5, 10].some(function (m) {
			if (span / (step * m) <= 8) {
				step *= m;
				return true;
			}
			return false;
		});
		var yAxis = H - AXIS + 4;
		axis.appendChild(svg('line', { x1: LABEL, y1: yAxis, x2: W - 10, y2: yAxis, stroke: '#9ca3af' }));
		for (var t = Math.ceil(from / step) * step; t <= to; t += step) {
			axis.appendChild(svg('line', { x1: x(t), y1: yAxis, x2: x(t), y2: yAxis + 4, stroke: '#9ca3af' }));
			axis.appendChild(svg('text', {
				x: x(t), y: yAxis + 15, 'text-anchor': x(t) > W - 60 ? 'end' : 'middle'
			}, fmtNs(t)));
		}
		root.appendChild(axis);
		return root;
	}

	function outlierDetail(o) {
		var box = el('div', { class: 'detail' });
		var heavy = heaviestKernelStack(o);
		box.appendChild(el('p', null,
			el('b', null, fmtNs(o.duration_ns)), ' in ', el('code', null, what(o)), ' of ',
			el('b', null, thread(o)), ': on CPU ' + fmtNs(o.on_cpu_ns) + ' (' +
			pct(o.on_cpu_ns, o.duration_ns) + '), blocked ' + fmtNs(o.blocked_ns) + ' (' +
			pct(o.blocked_ns, o.duration_ns) + '), runqueue ' + fmtNs(o.runqueue_ns) + ' (' +
			pct(o.runqueue_ns, o.duration_ns) + '), ' + (o.switches || 0) + ' switches.'));
		box.appendChild(splitBar(o, false));
		box.appendChild(el('p', null, 'Cause: ', el('b', { class: 'cause' }, o.cause || '?')));
		if (o.request && o.request.arg) {
			box.appendChild(el('p', null, 'Request argument: ', el('code', null, o.request.arg)));
		}
		if (o.flags && o.flags.length) {
			box.appendChild(el('ul', { class: 'flags' }, o.flags.map(function (f) {
				return el('li', null, f);
			})));
		}
		box.appendChild(el('h3', null, 'Timeline'));
		box.appendChild(legend());
		box.appendChild(timeline(o));
		var cols = el('div', { class: 'cols' });
		var userFrames = o.user_stack ? o.user_stack.frames : [];
		if (heavy || (userFrames && userFrames.length) || o.kind !== 'request') {
			cols.appendChild(el('div', null, el('h3', null, 'Where it waited' +
				(heavy ? ' (' + fmtNs(heavy.weight_ns) + ')' : '')),
				stackList(userFrames, heavy ? heavy.frames : [])));
		}
		if (o.waker) {
			cols.appendChild(el('div', null, el('h3', null, 'Woken by ' + (o.waker.comm || '?') +
				' (' + o.waker.pid + '/' + o.waker.tid + ')'), stackList([], o.waker.frames)));
		}
		if (o.holder) {
			cols.appendChild(el('div', null, el('h3', null, 'Held by ' + (o.holder.comm || '?') +
				' (' + o.holder.pid + '/' + o.holder.tid + ')'),
				stackList([], o.holder.frames)));
		}
		box.appendChild(cols);
		(o.kernel_stacks || []).forEach(function (s) {
			if (s !== heavy) {
				box.appendChild(el('h3', null, 'Also waited in (' + fmtNs(s.weight_ns) + ')'));
				box.appendChild(stackList([], s.frames));
			}
		});
		if (o.wait_chain && o.wait_chain.length) {
			box.appendChild(el('h3', null, 'Wait chain'));
			o.wait_chain.forEach(function (l) {
				box.appendChild(el('p', null, 'depth ' + l.depth + ': ', el('b', null,
					(l.comm || '?') + ' (' + l.pid + '/' + l.tid + ')'), ' ' +
					(l.syscall ? 'in ' + l.syscall + ', ' : '') + 'on CPU ' + fmtNs(l.on_cpu_ns) +
					', blocked ' + fmtNs(l.blocked_ns) + ', runqueue ' + fmtNs(l.runqueue_ns)));
				box.appendChild(stackList([], l.frames));
			});
		}
		if (o.cpu_profile && o.cpu_profile.length) {
			var sampled = o.cpu_profile.reduce(function (sum, p) {
				return sum + (p.weight_ns || 0);
			}, 0);
			box.appendChild(el('h3', { class: 'cpu-profile' }, 'CPU profile: ' + fmtNs(sampled) +
				' sampled in ' + o.cpu_profile.length + ' stack' +
				(o.cpu_profile.length === 1 ? '' : 's') + ', heaviest first'));
			o.cpu_profile.slice().sort(function (a, b) {
				return (b.weight_ns || 0) - (a.weight_ns || 0);
			}).slice(0, PROFILE_STACKS).forEach(function (p) {
				var frames = p.frames || [];
				box.appendChild(el('p', { class: 'sub' }, pct(p.weight_ns, sampled) + ' (' +
					fmtNs(p.weight_ns) + ')'));
				box.appendChild(stackList(frames.filter(function (f) {
					return f.module !== 'kernel';
				}), frames.filter(function (f) {
					return f.module === 'kernel';
				})));
			});
		}
		if (o.waits && o.waits.length) {
			box.appendChild(el('h3', null, 'Waits inside the request'));
			box.appendChild(el('table', null, el('tr', null, el('th', null, 'Syscall'),
				el('th', { class: 'num' }, 'Duration'), el('th', null, 'Cause')),
				o.waits.map(function (w) {
					return el('tr', null, el('td', null, what(w)),
						el('td', { class: 'num' }, fmtNs(w.duration_ns)), el('td', null, w.cause || ''));
				})));
		}
		return box;
	}

	function drawOutlier(section, o) {
		if (section.getAttribute('data-drawn')) {
			return;
		}
		section.setAttribute('data-drawn', '1');
		try {
			section.appendChild(outlierDetail(o));
		} catch (e) {
			fail('outlier ' + o._index + ': ' + e.message);
		}
	}

	function sortable(table, rows, keys, render) {
		var order = { key: null, dir: 1 };
		Array.prototype.forEach.call(table.querySelectorAll('th.sortable'), function (th) {
			th.addEventListener('click', function () {
				var k = th.getAttribute('data-key');
				order.dir = order.key === k ? -order.dir : -1;
				order.key = k;
				rows.sort(function (a, b) {
					var x = keys[k](a), y = keys[k](b);
					return (x < y ? -1 : x > y ? 1 : 0) * order.dir;
				});
				render();
			});
		});
	}

	// The index: one row per outlier, enough to pick one (thread, cause, innermost kernel frame).
	function outlierIndex(outliers, sections) {
		var table = el('table', { id: 'index' });
		var head = el('tr', null, el('th', { class: 'sortable num', 'data-key': 'index' }, '#'),
			el('th', { class: 'sortable', 'data-key': 'thread' }, 'Thread'),
			el('th', null, 'What'),
			el('th', { class: 'sortable num', 'data-key': 'duration' }, 'Duration'),
			el('th', null, 'Split'),
			el('th', { class: 'sortable', 'data-key': 'cause' }, 'Cause'),
			el('th', null, 'Innermost kernel frame'),
			el('th', { class: 'num' }, 'Flags'));
		var body = el('tbody');
		table.appendChild(el('thead', null, head));
		table.appendChild(body);
		var rows = outliers.slice();
		function render() {
			body.textContent = '';
			rows.forEach(function (o) {
				var k = innermostKernel(o);
				var link = el('a', { href: '#o-' + o._index }, String(o._index));
				link.addEventListener('click', function () {
					sections[o._index].open = true;
				});
				body.appendChild(el('tr', { class: 'outlier-row', 'data-index': o._index },
					el('td', { class: 'num' }, link),
					el('td', { class: 'thread' }, thread(o)),
					el('td', null, el('code', null, what(o))),
					el('td', { class: 'num' }, fmtNs(o.duration_ns)),
					el('td', null, splitBar(o, true)),
					el('td', { class: 'cause' }, o.cause || '?'),
					el('td', { class: 'frame' }, k ? frameName(k) : ''),
					el('td', { class: 'num' }, String((o.flags || []).length))));
			});
		}
		sortable(table, rows, {
			index: function (o) { return o._index; },
			thread: function (o) { return thread(o); },
			duration: function (o) { return o.duration_ns; },
			cause: function (o) { return o.cause || ''; }
		}, render);
		render();
		return table;
	}

	// Sections are drawn when opened: a snapshot of a thousand outliers opens at once.
	var EAGER = 3;
	// A request's CPU profile shows this many stacks (as show does).
	var PROFILE_STACKS = 10;

	function snapshotPage(d, root) {
		var outliers = d.outliers || [];
		outliers.forEach(function (o, i) {
			o._index = i + 1;
		});
		root.appendChild(el('h1', null, 'latsnap snapshot ' + (d.id || '')));
		root.appendChild(el('p', { class: 'sub' }, 'host ' + (d.host || '?') + ', created ' +
			(d.created || '?') + ': ' + outliers.length + ' outlier' +
			(outliers.length === 1 ? '' : 's') + ', ' + (d.skipped || 0) + ' skipped'));
		(d.flags || []).forEach(function (f) {
			root.appendChild(el('p', { class: 'warn' }, '! ' + f));
		});
		var sections = {};
		var list = el('div', { id: 'outliers' });
		outliers.forEach(function (o, i) {
			var sec = el('details', { class: 'outlier', id: 'o-' + o._index });
			sec.appendChild(el('summary', null, '#' + o._index + ' ' + thread(o) + ' ',
				el('code', null, what(o)), ' ' + fmtNs(o.duration_ns) + ' \u2014 ',
				el('span', { class: 'cause' }, o.cause || '?')));
			sec.addEventListener('toggle', function () {
				if (sec.open) {
					drawOutlier(sec, o);
				}
			});
			if (i < EAGER) {
				sec.open = true;
				drawOutlier(sec, o);
			}
			sections[o._index] = sec;
			list.appendChild(sec);
		});
		root.appendChild(el('h2', null, 'Outliers'));
		if (!outliers.length) {
			root.appendChild(el('p', null, 'No outlier in this snapshot.'));
		} else {
			root.appendChild(outlierIndex(outliers, sections));
		}
		root.appendChild(list);
		function openHash() {
			var m = /^#o-(\d+)$/.exec(location.hash);
			if (m && sections[m[1]]) {
				sections[m[1]].open = true;
				drawOutlier(sections[m[1]], outliers[Number(m[1]) - 1]);
			}
		}
		window.addEventListener('hashchange', openHash);
		openHash();
		if (d.idle && d.idle.length) {
			root.appendChild(el('h2', null, 'Idle waits (waiting for work: not latency)'));
			root.appendChild(el('table', null, el('tr', null, el('th', null, 'Thread'),
				el('th', { class: 'num' }, 'Count'), el('th', { class: 'num' }, 'Total'),
				el('th', null, 'Where')), d.idle.map(function (e) {
				return el('tr', null, el('td', null, (e.comm || '?') + ' (' + e.pid + '/' + e.tid + ')'),
					el('td', { class: 'num' }, String(e.count)),
					el('td', { class: 'num' }, fmtNs(e.total_ns)), el('td', null, e.site || ''));
			})));
		}
		var flame = document.getElementById('latsnap-flame');
		if (flame) {
			root.appendChild(el('h2', null, 'Flame graph of the snapshot (where its outliers waited)'));
			root.appendChild(flame);
			flame.hidden = false;
		}
	}

	function groupTable(table, what) {
		var t = el('table', { class: 'groups' }, el('tr', null,
			el('th', null, what.charAt(0).toUpperCase() + what.slice(1)),
			el('th', { class: 'num' }, 'Count'), el('th', { class: 'num' }, 'Average'),
			el('th', { class: 'num' }, 'Maximum'), el('th', { class: 'num' }, 'Percentage'),
			el('th', null, '')));
		(table.groups || []).forEach(function (g) {
			t.appendChild(el('tr', null, el('td', { class: 'key' }, g.key),
				el('td', { class: 'num' }, String(g.count)),
				el('td', { class: 'num' }, fmtNs(g.average_ns)),
				el('td', { class: 'num' }, fmtNs(g.max_ns)),
				el('td', { class: 'num' }, Number(g.percent || 0).toFixed(1) + '%'),
				el('td', null, el('span', { class: 'bar', style: 'width:' +
					Math.max(1, 2 * (g.percent || 0)).toFixed(1) + 'px' }))));
		});
		return t;
	}

	function histogram(g) {
		var max = 0;
		(g.histogram || []).forEach(function (b) {
			max = Math.max(max, b.count);
		});
		var t = el('table', { class: 'hist' });
		(g.histogram || []).forEach(function (b) {
			t.appendChild(el('tr', null,
				el('td', { class: 'num' }, fmtNs(b.from_ns) + ' \u2013 ' + fmtNs(b.to_ns)),
				el('td', null, el('span', { class: 'bar', style: 'width:' +
					(max ? Math.max(1, 300 * b.count / max) : 0).toFixed(1) + 'px' })),
				el('td', { class: 'num' }, String(b.count))));
		});
		return t;
	}

	function reportPage(d, root) {
		var sys = d.system || {};
		var snaps = d.snapshots || [];
		root.appendChild(el('h1', null, 'latsnap report of ' + (d.dir || '')));
		root.appendChild(el('p', { class: 'sub' }, snaps.length + ' snapshots (' +
			snaps.filter(function (s) { return s.status === 'complete'; }).length +
			' complete): ' + (sys.count || 0) + ' outliers, ' + fmtNs(sys.total_ns) +
			' in all, ' + (d.skipped || 0) + ' skipped by the recorder'));
		root.appendChild(el('h2', null, 'System-wide, by ' + (d.by || 'cause')));
		root.appendChild(groupTable(sys, d.by || 'cause'));
		if (d.longest && d.longest.length) {
			root.appendChild(el('h2', null, 'Longest waits'));
			var lt = el('table', { id: 'longest' }, el('tr', null,
				el('th', { class: 'num' }, 'Duration'), el('th', null, 'Thread'),
				el('th', null, 'Syscall'), el('th', null, 'Cause'),
				el('th', null, 'Held up by'), el('th', null, 'Snapshot')));
			d.longest.forEach(function (w) {
				var h = w.held_up_by, by = '';
				if (h) {
					by = (h.how === 'holder' ? 'held by ' : '') + (h.comm || '?') + '[' + h.pid +
						'/' + h.tid + ']' + (h.syscall ? ' in ' + h.syscall : '') +
						(h.cause ? ': ' + h.cause : '');
				}
				lt.appendChild(el('tr', null, el('td', { class: 'num' }, fmtNs(w.duration_ns)),
					el('td', null, (w.comm || '?') + '[' + w.pid + '/' + w.tid + ']'),
					el('td', null, w.syscall || 'off-cpu'), el('td', null, w.cause || ''),
					el('td', null, by), el('td', null, w.snapshot || '')));
			});
			root.appendChild(lt);
		}
		root.appendChild(el('h2', null, 'Distribution of each ' + (d.by || 'cause')));
		(sys.groups || []).forEach(function (g) {
			root.appendChild(el('h3', null, g.key));
			root.appendChild(histogram(g));
		});
		if (d.hosts && d.hosts.groups && d.hosts.groups.length > 1) {
			root.appendChild(el('h2', null, 'By host'));
			root.appendChild(groupTable(d.hosts, 'host'));
		}
		(d.processes || []).forEach(function (p) {
			root.appendChild(el('h2', null, 'Process ' + (p.comm || '?') + ' (' + p.pid + ')' +
				(p.host ? ' on ' + p.host : '') + ': ' + fmtNs(p.total_ns) + ' in ' + p.count +
				' outlier' + (p.count === 1 ? '' : 's') + ', ' + p.threads + ' thread' +
				(p.threads === 1 ? '' : 's')));
			root.appendChild(groupTable(p, d.by || 'cause'));
		});
		if (d.idle && d.idle.length) {
			root.appendChild(el('h2', null, 'Idle waits (waiting for work: not latency): ' +
				(d.idle_count || 0) + ', ' + fmtNs(d.idle_total_ns)));
		}
		root.appendChild(el('h2', null, 'Snapshots'));
		var links = d.links || {};
		var t = el('table', { id: 'snapshots' }, el('tr', null, el('th', null, 'Snapshot'),
			el('th', null, 'Host'), el('th', { class: 'num' }, 'Outliers'), el('th', null, 'Status')));
		snaps.forEach(function (s) {
			var name = links[s.id] ? el('a', { href: links[s.id], class: 'snapshot-link' }, s.id) : s.id;
			t.appendChild(el('tr', null, el('td', null, name), el('td', null, s.host || ''),
				el('td', { class: 'num' }, String(s.outliers || 0)),
				el('td', null, s.status + (s.reason ? ': ' + s.reason : ''))));
		});
		root.appendChild(t);
	}

	function main() {
		var t0 = performance.now();
		var root = document.getElementById('latsnap');
		var data;
		try {
			data = JSON.parse(document.getElementById('latsnap-data').textContent);
		} catch (e) {
			fail('the page data is not JSON: ' + e.message);
			return;
		}
		try {
			if (data.page === 'report') {
				reportPage(data, root);
			} else {
				snapshotPage(data, root);
			}
		} catch (e) {
			fail(e.message);
			return;
		}
		if (!errors.length) {
			document.body.setAttribute('data-render', 'ok');
		}
		document.body.setAttribute('data-draw-ms', String(Math.round(performance.now() - t0)));
	}

	if (document.readyState === 'loading') {
		document.addEventListener('DOMContentLoaded', main);
	} else {
		main();
	}
})();
