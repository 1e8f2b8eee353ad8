package p

// Workers counts workers; this file was written by hand.
var Workers = 3
