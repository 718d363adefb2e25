// SPDX-License-Identifier: GPL-2.0
/*
 * screen.c - the live screen of `latsnap top` (ncurses): the system's table, the threads stalled
 * now, the selected process's (or thread's) table, the bar to move between them and the keys; a
 * refresh each interval.
 */
#include <errno.h>
#include <ncurses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/text.h"
#include "lib/util.h"
#include "top/top-int.h"

static void draw_line(int y, const char *text, bool bold)
{
	if (y >= LINES) {
		return;
	}
	if (bold) {
		attron(A_BOLD);
	}
	mvaddnstr(y, 0, text, COLS);
	if (bold) {
		attroff(A_BOLD);
	}
}

/* A table at line @y; returns the line below it, as if all of @max_rows were shown. */
static int draw_table(struct top *t, int y, uint32_t tgid, uint32_t tid, size_t max_rows,
		      uint64_t total)
{
	struct top_row *rows;
	size_t n, i;
	int width = COLS - 53;
	char line[512];

	if (width < 20) {
		width = 20;
	}
	/* Beyond the longest cause text (RULES_MAX_CAUSE is rare), a wider column only spreads. */
	if (width > 64) {
		width = 64;
	}
	n = top_table(t->cur.waits, t->cur.nr, tgid, tid, t->view, t->sort, &rows);
	top_format_header(line, sizeof(line), t->view == TOP_VIEW_OBJECT ? "Object" : "Cause",
			  width);
	draw_line(y++, line, true);
	for (i = 0; i < n && i < max_rows; i++) {
		top_format_row(line, sizeof(line), &rows[i], total, width);
		draw_line(y++, line, false);
	}
	free(rows);
	return y + (int)(max_rows - (i < max_rows ? i : max_rows));
}

/* The process bar: the entities around the selected one, arrows where more are hidden. */
static void draw_bar(int y, const struct top_entity *list, size_t n, size_t sel)
{
	size_t first = sel, last, i;
	int width = COLS - 4, used;
	char item[96];

	if (y >= LINES) {
		return;
	}
	/* Start far enough left to show what comes before, while the selected one fits. */
	used = 0;
	while (first > 0) {
		snprintf(item, sizeof(item), " %s(%u) ", LS_TEXT(list[first - 1].name),
			 list[first - 1].id);
		if (used + (int)strlen(item) > width / 2) {
			break;
		}
		used += (int)strlen(item);
		first--;
	}
	move(y, 0);
	addstr(first > 0 ? "<- " : "   ");
	used = 3;
	for (i = first; i < n; i++) {
		snprintf(item, sizeof(item), i == sel ? "[%s(%u)]" : " %s(%u) ",
			 LS_TEXT(list[i].name), list[i].id);
		if (used + (int)strlen(item) > width) {
			break;
		}
		if (i == sel) {
			attron(A_REVERSE);
		}
		addstr(item);
		if (i == sel) {
			attroff(A_REVERSE);
		}
		used += (int)strlen(item);
	}
	last = i;
	if (last < n) {
		mvaddstr(y, COLS - 3, " ->");
	}
}

/* The selected process's (or thread's) heading, table and the bar, from line @y down. */
static void draw_selected(struct top *t, int y)
{
	struct top_entity *list;
	size_t n, sel;
	char line[512];
	int rows;

	/* The process bar and the hint line stay at the bottom. */
	rows = LINES - 3 - (y + 2);
	rows = rows > PROCESS_ROWS ? PROCESS_ROWS : rows < 0 ? 0 : rows;
	n = top_entities(t, t->threads, &list);
	if (n) {
		sel = top_entity_index(list, n, t->sel_id);
		t->sel_id = list[sel].id;
		top_format_entity(&list[sel], t->threads, line, sizeof(line));
		draw_line(y++, line, true);
		draw_table(t, y, t->threads ? 0 : list[sel].id, t->threads ? list[sel].id : 0,
			   (size_t)rows, list[sel].total_ns);
		draw_bar(LINES - 3, list, n, sel);
	} else {
		draw_line(y, t->threads ? "(no thread waited)" : "(no process waited)", false);
	}
	free(list);
}

/*
 * The stalled threads at line @y, longest first, at most STALL_ROWS lines (the last one says how
 * many more); returns the line below them, @y when there are none (nothing drawn).
 */
static int draw_stalled(struct top *t, int y)
{
	size_t n = t->cur.nr_stalled, shown, i;
	char line[512];

	if (!n) {
		return y;
	}
	top_format_stalled_title(t, line, sizeof(line));
	draw_line(y++, line, true);
	shown = n > STALL_ROWS ? STALL_ROWS - 1 : n;
	for (i = 0; i < shown; i++) {
		top_format_stalled(&t->cur.stalled[i], line, sizeof(line));
		draw_line(y++, line, false);
	}
	if (shown < n) {
		snprintf(line, sizeof(line), "... and %zu more (--batch lists them all)",
			 n - shown);
		draw_line(y++, line, false);
	}
	return y + 1;
}

static void draw(struct top *t)
{
	char line[512];
	int y = 0, rows;

	erase();
	top_format_title(t, line, sizeof(line));
	draw_line(y++, line, true);
	/* In the blank line below the title: the layout stays that of --include-idle. */
	if (!t->opts.include_idle && t->cur.when) {
		top_format_idle(t, line, sizeof(line));
		draw_line(y, line, false);
	}
	y++;
	snprintf(line, sizeof(line), "System wide latencies (%s)", top_view_name(t->view));
	draw_line(y++, line, true);
	if (!t->cur.when) {
		snprintf(line, sizeof(line), "(collecting the first %.1f s)",
			 (double)t->opts.interval_ns / 1e9);
		draw_line(y, line, false);
	}
	/* A short terminal first gives up system rows beyond 5, then process rows. */
	rows = LINES - 10 - PROCESS_ROWS;
	rows = rows > SYSTEM_ROWS ? SYSTEM_ROWS : rows < 5 ? 5 : rows;
	y = draw_table(t, y, 0, 0, (size_t)rows, t->cur.total_ns);
	y++;
	y = draw_stalled(t, y);
	draw_selected(t, y);
	draw_line(LINES - 1,
		  "< >: previous/next  t: processes/threads  1: causes  2: special  3: objects  "
		  "c/a/m/s: sort by count/average/maximum/total  q: quit",
		  false);
	refresh();
}

/* Moves the selection by @step among the listed processes or threads. */
static void move_selection(struct top *t, int step)
{
	struct top_entity *list;
	size_t n, sel;

	n = top_entities(t, t->threads, &list);
	if (n) {
		sel = top_entity_index(list, n, t->sel_id);
		if (step < 0 && sel > 0) {
			sel--;
		} else if (step > 0 && sel + 1 < n) {
			sel++;
		}
		t->sel_id = list[sel].id;
	}
	free(list);
}

/* Handles one key; false when it asks to quit. */
static bool handle_key(struct top *t, int ch)
{
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case '<':
	case ',':
	case KEY_LEFT:
		move_selection(t, -1);
		break;
	case '>':
	case '.':
	case KEY_RIGHT:
		move_selection(t, 1);
		break;
	case 't':
		t->threads = !t->threads;
		t->sel_id = 0;
		break;
	case '1':
		t->view = TOP_VIEW_CAUSE;
		break;
	case '2':
		t->view = TOP_VIEW_SPECIAL;
		break;
	case '3':
		t->view = TOP_VIEW_OBJECT;
		break;
	case 'c':
		t->sort = TOP_SORT_COUNT;
		break;
	case 'a':
		t->sort = TOP_SORT_AVERAGE;
		break;
	case 'm':
		t->sort = TOP_SORT_MAXIMUM;
		break;
	case 's':
		t->sort = TOP_SORT_TOTAL;
		break;
	default:
		break;
	}
	return true;
}

/**
 * top_screen_run() - the live screen, until q or a signal: a refresh each interval, the keys
 * between them
 * @t: the loaded program, the options
 *
 * Return: 0, or a negative errno said on stderr (no terminal, or a refresh failed).
 */
int top_screen_run(struct top *t)
{
	uint64_t next = ls_now_ns() + t->opts.interval_ns, now;
	int ch, ret = 0;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		ls_err("top: the live screen needs a terminal (use --batch N for text)");
		return -ENOTTY;
	}
	if (!initscr()) {
		ls_err("top: cannot start the terminal screen");
		return -ENOTTY;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	draw(t);
	while (!top_stop_requested) {
		now = ls_now_ns();
		if (now >= next) {
			ret = top_drain(t);
			if (ret) {
				break;
			}
			next = now + t->opts.interval_ns;
			draw(t);
			continue;
		}
		timeout((int)((next - now) / 1000000) + 1);
		ch = getch();
		if (ch == ERR) {
			continue;
		}
		if (ch == KEY_RESIZE) {
			draw(t);
			continue;
		}
		if (!handle_key(t, ch)) {
			break;
		}
		draw(t);
	}
	endwin();
	return ret;
}
