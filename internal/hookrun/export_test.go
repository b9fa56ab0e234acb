package hookrun

// RuleIDs are the restated gate rule ids, for TestRulesMatchGate.
var RuleIDs = []string{ruleHuman, ruleToolAllow, ruleGrantExact, ruleGrantPrefix, ruleGrantClass, ruleDenyRule, ruleHardline}
