// Package makefile holds the checks of the repository's Makefile: what
// `make help` shows a new user.
package makefile
