package handlers

import (
	"context"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// The unrestrictedSubjects of the capacity and resource-size webhooks and
// of the authorizer's shortcut: who a Subjects list matches.

// Subject kinds of unrestrictedSubjects.
const (
	SubjectUser           = "User"
	SubjectGroup          = "Group"
	SubjectServiceAccount = "ServiceAccount"
)

// Subject names a user, a group or a service account. Name and Namespace may
// hold "*", which matches any run of characters (also none), so
// {User, "system:serviceaccount:garden:*"} matches every service account of
// the garden namespace.
type Subject struct {
	Kind, Name, Namespace string
}

// Subjects is a list of subjects; a user matches when any entry does.
type Subjects []Subject

const serviceAccountPrefix = "system:serviceaccount:"

// Match reports whether the user is one of the subjects: a User by name, a
// Group among the user's groups, a ServiceAccount by the namespace and name
// in its user name (system:serviceaccount:<namespace>:<name>).
func (s Subjects) Match(u authenticationv1.UserInfo) bool {
	for _, sub := range s {
		switch sub.Kind {
		case SubjectUser:
			if globMatch(sub.Name, u.Username) {
				return true
			}
		case SubjectGroup:
			for _, g := range u.Groups {
				if globMatch(sub.Name, g) {
					return true
				}
			}
		case SubjectServiceAccount:
			rest, ok := strings.CutPrefix(u.Username, serviceAccountPrefix)
			if !ok {
				continue
			}
			ns, name, ok := strings.Cut(rest, ":")
			if ok && globMatch(sub.Namespace, ns) && globMatch(sub.Name, name) {
				return true
			}
		}
	}
	return false
}

// MatchAsGardener is gardener-admission-controller's rule for its
// unrestrictedSubjects: a service account (user name
// system:serviceaccount:...) is matched by ServiceAccount subjects only, any
// other user by User and Group subjects only, so {Group, "*"} exempts every
// user but no service account (Match would take any group of either).
// Group "*" matches a user even without groups. Names and namespaces are
// matched as in Match ("*" globs); Gardener knows only a whole "*" name, and
// a ServiceAccount namespace "*" there matches nothing.
func (s Subjects) MatchAsGardener(u authenticationv1.UserInfo) bool {
	sa := strings.HasPrefix(u.Username, serviceAccountPrefix)
	for _, sub := range s {
		switch {
		case sa != (sub.Kind == SubjectServiceAccount):
			continue
		case sub.Kind == SubjectGroup && sub.Name == "*":
			return true
		case Subjects{sub}.Match(u):
			return true
		}
	}
	return false
}

// globMatch matches s against pattern, where "*" stands for any run of
// characters and everything else for itself.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// SubjectsAuthorizer allows exactly the listed subjects. It stands in for
// RBAC in --landscape mode, where there is no API server to ask; an empty
// list allows nobody.
type SubjectsAuthorizer struct {
	Subjects Subjects
}

// Allowed implements Authorizer.
func (a SubjectsAuthorizer) Allowed(_ context.Context, user authenticationv1.UserInfo, _, _ string) (bool, string, error) {
	if a.Subjects.Match(user) {
		return true, "listed in binding.landscapeAllowedSubjects", nil
	}
	return false, "landscape mode: only binding.landscapeAllowedSubjects may bind Shoots", nil
}
