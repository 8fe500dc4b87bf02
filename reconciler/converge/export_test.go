package converge

// NudgeAdoption is nudgeAdoption, for the test of its pace.
var NudgeAdoption = (*Converger).nudgeAdoption
