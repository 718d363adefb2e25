/* SPDX-License-Identifier: GPL-2.0 */
/*
 * html-assets.S - the script and style sheet that review/html.c inlines into every HTML page,
 * kept as files of their own (review/html/) so that they read, lint and diff as what they are.
 * Each is NUL-terminated.
 */
	.section .rodata
	.global ls_html_page_js
	.type ls_html_page_js, @object
ls_html_page_js:
	.incbin "review/html/page.js"
	.byte 0
	.size ls_html_page_js, . - ls_html_page_js

	.global ls_html_page_css
	.type ls_html_page_css, @object
ls_html_page_css:
	.incbin "review/html/page.css"
	.byte 0
	.size ls_html_page_css, . - ls_html_page_css

	.section .note.GNU-stack, "", @progbits
