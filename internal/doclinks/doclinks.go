// Package doclinks checks the relative links of Markdown pages: every link
// to a file of the repository names one that exists, and every #anchor
// names a heading of its page, spelt as GitHub spells heading anchors.
// Its test runs it over README.md and docs/*.md, so a section moved or
// renamed cannot leave a link pointing nowhere.
package doclinks

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

var (
	// link matches an inline link or image, [text](target) or
	// [text](target "title"); the target is group 1.
	link = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// heading matches an ATX heading; its text is group 1.
	heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	// codeSpan matches inline code, whose brackets are not links.
	codeSpan = regexp.MustCompile("`[^`]*`")
)

// Slug returns the anchor GitHub gives a heading's text: links reduced to
// their text, lower case, every character but letters, digits, '_', '-'
// and spaces dropped, spaces turned into '-'.
func Slug(text string) string {
	text = link.ReplaceAllStringFunc(text, func(m string) string {
		return m[strings.Index(m, "[")+1 : strings.Index(m, "]")]
	})
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// page is what Check reads of one Markdown file: its anchors and its links
// with their line numbers.
type page struct {
	anchors map[string]bool
	links   []pageLink
}

type pageLink struct {
	line   int
	target string
}

// parse reads a Markdown text, skipping fenced code blocks and code spans.
func parse(text string) page {
	p := page{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			s := Slug(m[1])
			if n := seen[s]; n > 0 {
				p.anchors[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				p.anchors[s] = true
			}
			seen[s]++
		}
		for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			p.links = append(p.links, pageLink{line: i + 1, target: m[1]})
		}
	}
	return p
}

// Check reads the Markdown files (paths relative to root) and returns one
// error per broken relative link, as file:line: message. Links with a
// scheme (https:, mailto:) are not followed.
func Check(root string, files []string) []error {
	pages := map[string]page{}
	read := func(rel string) (page, error) {
		if p, ok := pages[rel]; ok {
			return p, nil
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return page{}, err
		}
		p := parse(string(b))
		pages[rel] = p
		return p, nil
	}
	var errs []error
	for _, file := range files {
		p, err := read(file)
		if err != nil {
			errs = append(errs, fmt.Errorf("doclinks: %s: %w", file, err))
			continue
		}
		for _, l := range p.links {
			if strings.Contains(l.target, ":") && !strings.HasPrefix(l.target, "#") {
				continue // a URL
			}
			path, anchor, _ := strings.Cut(l.target, "#")
			target := file
			if path != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
				if strings.HasPrefix(target, "../") {
					errs = append(errs, fmt.Errorf("%s:%d: %s leaves the repository", file, l.line, l.target))
					continue
				}
				if _, err := os.Stat(filepath.Join(root, target)); err != nil {
					errs = append(errs, fmt.Errorf("%s:%d: %s: no such file", file, l.line, l.target))
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				errs = append(errs, fmt.Errorf("%s:%d: %s: an anchor into a file that is not Markdown", file, l.line, l.target))
				continue
			}
			tp, err := read(target)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: %s: %w", file, l.line, l.target, err))
				continue
			}
			if !tp.anchors[anchor] {
				errs = append(errs, fmt.Errorf("%s:%d: %s: %s has no heading with anchor #%s", file, l.line, l.target, target, anchor))
			}
		}
	}
	return errs
}
