package main

import "github.com/grmdp/grmdp/internal/textfmt"

// quoteName returns a name from the data or a job (a site, a cluster, an
// action label) as terminal output prints it (textfmt.Quote): Go-quoted
// when it holds a character a terminal would act on.
func quoteName(s string) string { return textfmt.Quote(s) }

// quoteNames is quoteName of every name.
func quoteNames(names []string) []string { return textfmt.QuoteAll(names) }
