// Package spokes is the list of clusters claimwarden converges StatefulSets
// on besides its own (the spokes of a hub, issue 41) and their credentials.
// The operator lists them (the configuration's clusters), each with the
// Secret holding the credential its GitOps tool uses there; Load reads each
// Secret once into a rest.Config.
//
// A credential is data, never code or a path: one that runs a command (an
// exec plugin, an auth provider) or names a file is refused, since either
// would act inside claimwarden's Pod, a file possibly with claimwarden's own
// service account token. A tool's own format (an Argo CD cluster Secret) is
// parsed in the tool's folder and handed to Load as a Parser, so this
// package knows no tool.
package spokes
