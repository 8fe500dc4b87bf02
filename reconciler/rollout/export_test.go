package rollout

// TemplatesHash is templatesHash, for the tests against the API server.
var TemplatesHash = templatesHash
