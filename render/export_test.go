package render

// StructureProblems is what is wrong with a page written by WriteHTML,
// for the tests of package render_test.
var StructureProblems = structureProblems
